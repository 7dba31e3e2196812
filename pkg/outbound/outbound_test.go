package outbound_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbound"
)

// target is a loopback test server that counts the requests it received.
type target struct {
	*httptest.Server
	hits atomic.Int64
}

func newTarget(h http.HandlerFunc) *target {
	t := &target{}
	t.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.hits.Add(1)
		h(w, r)
	}))
	DeferCleanup(t.Close)
	return t
}

func get(raw string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, raw, nil)
	Expect(err).NotTo(HaveOccurred())
	return req
}

func hello(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("hello")) }

var _ = Describe("sending requests to user-given URLs", func() {
	It("refuses a loopback server by default without sending anything", func(ctx SpecContext) {
		srv := newTarget(hello)
		_, err := outbound.New(outbound.Options{}).Do(ctx, get(srv.URL))
		Expect(errors.Is(err, outbound.ErrRefusedDestination)).To(BeTrue(), "got %v", err)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		Expect(srv.hits.Load()).To(BeZero())
	})

	It("reaches a loopback server when loopback is allowed", func(ctx SpecContext) {
		srv := newTarget(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Seen-Agent", r.UserAgent())
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte("hello"))
		})
		resp, err := outbound.New(outbound.Options{AllowLoopback: true, UserAgent: "motionstudio-test/1"}).Do(ctx, get(srv.URL))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.StatusCode).To(Equal(http.StatusAccepted))
		Expect(string(resp.Body)).To(Equal("hello"))
		Expect(resp.Truncated).To(BeFalse())
		Expect(resp.Header.Get("X-Seen-Agent")).To(Equal("motionstudio-test/1"))
		Expect(resp.Duration).To(BeNumerically(">", 0))
	})

	It("refuses a name that resolves to loopback, checking after DNS", func(ctx SpecContext) {
		srv := newTarget(hello)
		u, err := url.Parse(srv.URL)
		Expect(err).NotTo(HaveOccurred())
		_, err = outbound.New(outbound.Options{}).Do(ctx, get("http://localhost:"+u.Port()+"/"))
		Expect(errors.Is(err, outbound.ErrRefusedDestination)).To(BeTrue(), "got %v", err)
		Expect(srv.hits.Load()).To(BeZero())
	})

	It("judges an IPv4-mapped IPv6 address as the IPv4 address it carries", func(ctx SpecContext) {
		srv := newTarget(hello)
		u, err := url.Parse(srv.URL)
		Expect(err).NotTo(HaveOccurred())
		mapped := "http://[::ffff:127.0.0.1]:" + u.Port() + "/"

		_, err = outbound.New(outbound.Options{}).Do(ctx, get(mapped))
		Expect(errors.Is(err, outbound.ErrRefusedDestination)).To(BeTrue(), "got %v", err)
		Expect(srv.hits.Load()).To(BeZero())

		resp, err := outbound.New(outbound.Options{AllowLoopback: true}).Do(ctx, get(mapped))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(resp.Body)).To(Equal("hello"))
	})

	// These addresses are refused by the dialer's control hook before connect(), so no packet
	// ever leaves the machine.
	DescribeTable("refuses private, link-local and special-purpose addresses before connecting",
		func(ctx SpecContext, raw string) {
			start := time.Now()
			_, err := outbound.New(outbound.Options{AllowLoopback: true}).Do(ctx, get(raw))
			Expect(errors.Is(err, outbound.ErrRefusedDestination)).To(BeTrue(), "got %v", err)
			Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
			Expect(time.Since(start)).To(BeNumerically("<", time.Second))
		},
		Entry("private 10/8", "http://10.0.0.1/hook"),
		Entry("cloud metadata", "http://169.254.169.254/latest/meta-data/"),
		Entry("private 192.168/16", "http://192.168.1.10:8080/"),
		Entry("private 172.16/12", "https://172.16.0.1/"),
		Entry("carrier-grade NAT", "http://100.64.0.1/"),
		Entry("unspecified", "http://0.0.0.0/"),
		Entry("IPv4-mapped private", "http://[::ffff:10.0.0.1]/"),
		Entry("IPv6 unique local", "http://[fd00::1]/"),
		Entry("IPv6 link-local", "http://[fe80::1]/"),
	)

	It("refuses IPv6 loopback unless loopback is allowed", func(ctx SpecContext) {
		_, err := outbound.New(outbound.Options{}).Do(ctx, get("http://[::1]:9/"))
		Expect(errors.Is(err, outbound.ErrRefusedDestination)).To(BeTrue(), "got %v", err)
	})

	It("returns a redirect instead of following it", func(ctx SpecContext) {
		var followed atomic.Bool
		srv := newTarget(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/next" {
				followed.Store(true)
				return
			}
			http.Redirect(w, r, "/next", http.StatusFound)
		})
		resp, err := outbound.New(outbound.Options{AllowLoopback: true}).Do(ctx, get(srv.URL+"/start"))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.StatusCode).To(Equal(http.StatusFound))
		Expect(resp.Header.Get("Location")).To(Equal("/next"))
		Expect(followed.Load()).To(BeFalse())
		Expect(srv.hits.Load()).To(BeEquivalentTo(1))
	})

	It("cuts a body longer than the cap and says so", func(ctx SpecContext) {
		srv := newTarget(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat("a", 1000) + strings.Repeat("b", 5000)))
		})
		resp, err := outbound.New(outbound.Options{AllowLoopback: true, MaxBodyBytes: 1000}).Do(ctx, get(srv.URL))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Truncated).To(BeTrue())
		Expect(string(resp.Body)).To(Equal(strings.Repeat("a", 1000)))
	})

	It("keeps a body exactly as long as the cap whole", func(ctx SpecContext) {
		srv := newTarget(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat("a", 1000)))
		})
		resp, err := outbound.New(outbound.Options{AllowLoopback: true, MaxBodyBytes: 1000}).Do(ctx, get(srv.URL))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Truncated).To(BeFalse())
		Expect(resp.Body).To(HaveLen(1000))
	})

	It("gives up on a server that does not answer in time", func(ctx SpecContext) {
		srv := newTarget(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		})
		start := time.Now()
		_, err := outbound.New(outbound.Options{AllowLoopback: true, Timeout: 200 * time.Millisecond}).Do(ctx, get(srv.URL))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
		e, _ := apperr.As(err)
		Expect(e.Code).To(Equal("destination_timeout"))
		Expect(time.Since(start)).To(BeNumerically("<", 2*time.Second))
	})

	It("gives up on a body that trickles past the timeout", func(ctx SpecContext) {
		srv := newTarget(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		_, err := outbound.New(outbound.Options{AllowLoopback: true, Timeout: 200 * time.Millisecond}).Do(ctx, get(srv.URL))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
	})

	It("reports a closed port as unreachable", func(ctx SpecContext) {
		_, err := outbound.New(outbound.Options{AllowLoopback: true}).Do(ctx, get("http://127.0.0.1:1/"))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
		Expect(errors.Is(err, outbound.ErrRefusedDestination)).To(BeFalse())
	})

	It("sends only http and https", func(ctx SpecContext) {
		_, err := outbound.New(outbound.Options{AllowLoopback: true}).Do(ctx, get("ftp://127.0.0.1/file"))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
	})
})

var _ = Describe("the standard client for SDKs", func() {
	It("applies the same guard, and Classify names the refusal", func(ctx SpecContext) {
		srv := newTarget(hello)
		req := get(srv.URL).WithContext(ctx)
		_, err := outbound.New(outbound.Options{}).HTTPClient().Do(req)
		Expect(errors.Is(err, outbound.ErrRefusedDestination)).To(BeTrue(), "got %v", err)
		Expect(apperr.KindOf(outbound.Classify(err, req.URL))).To(Equal(apperr.Invalid))
		Expect(srv.hits.Load()).To(BeZero())
	})

	It("sets the user agent, reads a body up to the cap and fails past it", func(ctx SpecContext) {
		srv := newTarget(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Seen-Agent", r.UserAgent())
			n, _ := strconv.Atoi(r.URL.Query().Get("n"))
			_, _ = w.Write([]byte(strings.Repeat("a", n)))
		})
		client := outbound.New(outbound.Options{AllowLoopback: true, MaxBodyBytes: 1000, UserAgent: "motionstudio-test/1"}).HTTPClient()
		resp, err := client.Do(get(srv.URL + "?n=1000").WithContext(ctx))
		Expect(err).NotTo(HaveOccurred())
		body, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		Expect(body).To(HaveLen(1000))
		Expect(resp.Header.Get("X-Seen-Agent")).To(Equal("motionstudio-test/1"))
		Expect(resp.Body.Close()).To(Succeed())

		resp, err = client.Do(get(srv.URL + "?n=1001").WithContext(ctx))
		Expect(err).NotTo(HaveOccurred())
		_, err = io.ReadAll(resp.Body)
		Expect(err).To(MatchError(outbound.ErrBodyTooLarge))
		Expect(resp.Body.Close()).To(Succeed())
	})

	It("returns a redirect instead of following it", func(ctx SpecContext) {
		srv := newTarget(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		})
		resp, err := outbound.New(outbound.Options{AllowLoopback: true}).HTTPClient().Do(get(srv.URL).WithContext(ctx))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.StatusCode).To(Equal(http.StatusFound))
		Expect(resp.Body.Close()).To(Succeed())
		Expect(srv.hits.Load()).To(BeEquivalentTo(1))
	})

	It("classifies a closed port as unreachable", func(ctx SpecContext) {
		req := get("http://127.0.0.1:1/").WithContext(ctx)
		_, err := outbound.New(outbound.Options{AllowLoopback: true}).HTTPClient().Do(req)
		Expect(apperr.KindOf(outbound.Classify(err, req.URL))).To(Equal(apperr.Unavailable))
	})
})

var _ = Describe("validating a URL when it is registered", func() {
	DescribeTable("rejects",
		func(raw string, allowLoopback bool, message string) {
			err := outbound.ValidateURL(raw, allowLoopback)
			Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
			e, _ := apperr.As(err)
			Expect(e.Message).To(ContainSubstring(message))
		},
		Entry("another scheme", "ftp://example.com/file", false, "http:// or https://"),
		Entry("a relative URL", "/hooks/1", false, "http:// or https://"),
		Entry("user info", "https://user:secret@example.com/hook", false, "user name or password"),
		Entry("a missing host", "https:///hook", false, "must include a host"),
		Entry("a private literal IP", "http://10.0.0.1/hook", true, "private, loopback or reserved"),
		Entry("the metadata address", "http://169.254.169.254/", true, "private, loopback or reserved"),
		Entry("an IPv4-mapped private IP", "http://[::ffff:192.168.0.1]/", true, "private, loopback or reserved"),
		Entry("loopback by default", "http://127.0.0.1:8080/hook", false, "private, loopback or reserved"),
		Entry("localhost by default", "http://localhost:8080/hook", false, "private, loopback or reserved"),
		Entry("garbage", "http://[::1", false, "not a valid URL"),
	)

	DescribeTable("accepts",
		func(raw string, allowLoopback bool) {
			Expect(outbound.ValidateURL(raw, allowLoopback)).To(Succeed())
		},
		Entry("a public https URL", "https://hooks.example.com/v1/receive?x=1", false),
		Entry("a public IP", "http://93.184.215.14:8443/hook", false),
		Entry("loopback when allowed", "http://127.0.0.1:8080/hook", true),
		Entry("localhost when allowed", "http://localhost:8080/hook", true),
	)
})
