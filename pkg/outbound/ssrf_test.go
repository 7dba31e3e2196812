package outbound_test

import (
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/pkg/testkit"
)

// The SSRF sweep of the shared client: each way of writing or reaching an address the platform
// must not call, refused when the URL is registered (ValidateURL) and again when a request is
// sent (after DNS, on every new connection), with loopback allowed as the tests and local
// development allow it, so only the allowance keeps 127.0.0.1 reachable.
var _ = Describe("SSRF attempts", func() {
	var (
		dns    *testkit.DNS
		srv    *target
		port   string
		client *outbound.Client
	)

	BeforeEach(func() {
		dns = testkit.StartDNS()
		srv = newTarget(hello)
		u, err := url.Parse(srv.URL)
		Expect(err).NotTo(HaveOccurred())
		port = u.Port()
		client = outbound.New(outbound.Options{AllowLoopback: true, DNSServer: dns.Addr()})
	})

	publish := func(name string, addrs ...string) {
		parsed := make([]netip.Addr, len(addrs))
		for i, a := range addrs {
			parsed[i] = netip.MustParseAddr(a)
		}
		dns.SetAddrs(name, parsed...)
	}

	refusedWhenSent := func(ctx SpecContext, raw string, allowLoopback bool) {
		GinkgoHelper()
		c := client
		if !allowLoopback {
			c = outbound.New(outbound.Options{DNSServer: dns.Addr()})
		}
		_, err := c.Do(ctx, get(raw))
		Expect(errors.Is(err, outbound.ErrRefusedDestination)).To(BeTrue(), "%s: got %v", raw, err)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))

		req := get(raw).WithContext(ctx)
		resp, err := c.HTTPClient().Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		Expect(errors.Is(err, outbound.ErrRefusedDestination)).To(BeTrue(), "%s through the SDK client: got %v", raw, err)
		Expect(srv.hits.Load()).To(BeZero())
	}

	DescribeTable("refused when registered and when sent",
		func(ctx SpecContext, rawURL string, allowLoopback bool, message string) {
			// Resolvers answer loopback for every name under localhost (RFC 6761).
			publish("api.localhost", "127.0.0.1")
			raw := expandPort(rawURL, port)
			err := outbound.ValidateURL(raw, allowLoopback)
			Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid), raw)
			e, _ := apperr.As(err)
			Expect(e.Message).To(Equal(message))
			refusedWhenSent(ctx, raw, allowLoopback)
		},
		Entry("loopback 127.0.0.1", "http://127.0.0.1:PORT/", false, privateMsg),
		Entry("loopback elsewhere in 127/8", "http://127.1.2.3:PORT/", false, privateMsg),
		Entry("IPv6 loopback", "http://[::1]:PORT/", false, privateMsg),
		Entry("localhost", "http://localhost:PORT/", false, privateMsg),
		Entry("a name under .localhost", "http://api.localhost:PORT/", false, privateMsg),
		Entry("link-local", "http://169.254.1.1:PORT/", true, privateMsg),
		Entry("the metadata address", "http://169.254.169.254/latest/meta-data/", true, privateMsg),
		Entry("IPv6 link-local", "http://[fe80::1]:PORT/", true, privateMsg),
		Entry("private 10/8", "http://10.0.0.1:PORT/", true, privateMsg),
		Entry("private 172.16/12", "http://172.31.255.254:PORT/", true, privateMsg),
		Entry("private 192.168/16", "http://192.168.0.1:PORT/", true, privateMsg),
		Entry("carrier-grade NAT", "http://100.64.0.1:PORT/", true, privateMsg),
		Entry("unspecified", "http://0.0.0.0:PORT/", true, privateMsg),
		Entry("IPv6 unique local", "http://[fd12:3456::1]:PORT/", true, privateMsg),
		Entry("decimal loopback", "http://2130706433:PORT/", false, privateMsg),
		Entry("decimal metadata", "http://2852039166/latest/meta-data/", true, privateMsg),
		Entry("octal loopback", "http://0177.0.0.1:PORT/", false, privateMsg),
		Entry("hex loopback", "http://0x7f.0x0.0x0.0x1:PORT/", false, privateMsg),
		Entry("hex loopback in one number", "http://0x7f000001:PORT/", false, privateMsg),
		Entry("short loopback", "http://127.1:PORT/", false, privateMsg),
		Entry("octal private", "http://012.0.0.1:PORT/", true, privateMsg),
		Entry("full-width digits that map to loopback", "http://１２７.０.０.１:PORT/", false, privateMsg),
		Entry("IPv4-mapped IPv6 loopback", "http://[::ffff:127.0.0.1]:PORT/", false, privateMsg),
		Entry("IPv4-mapped IPv6 metadata in hex", "http://[::ffff:a9fe:a9fe]/", true, privateMsg),
		Entry("IPv4-mapped IPv6 private", "http://[::ffff:10.0.0.1]:PORT/", true, privateMsg),
		Entry("IPv4-compatible IPv6 loopback", "http://[::127.0.0.1]:PORT/", true, privateMsg),
		Entry("NAT64 of a private address", "http://[64:ff9b::a00:1]:PORT/", true, privateMsg),
		Entry("6to4 of loopback", "http://[2002:7f00:1::]:PORT/", true, privateMsg),
		Entry("IPv6 with a zone", "http://[fe80::1%25eth0]:PORT/", true, privateMsg),
	)

	DescribeTable("names reserved for private networks are refused when registered and, resolving privately, when sent",
		func(ctx SpecContext, name, resolvesTo string) {
			publish(name, resolvesTo)
			raw := "http://" + name + ":" + port + "/"
			err := outbound.ValidateURL(raw, true)
			Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid), raw)
			e, _ := apperr.As(err)
			Expect(e.Message).To(Equal(privateMsg))
			refusedWhenSent(ctx, raw, true)
		},
		Entry("the GCP metadata name", "metadata.google.internal", "169.254.169.254"),
		Entry("a single-label name", "metadata", "169.254.169.254"),
		Entry("a cluster service name", "redis", "10.96.0.10"),
		Entry("an mDNS name", "printer.local", "192.168.1.20"),
		Entry("a home network name", "nas.home.arpa", "192.168.1.30"),
	)

	DescribeTable("public-looking names that resolve to refused addresses pass registration and are refused when sent",
		func(ctx SpecContext, allowLoopback bool, addrs ...string) {
			publish("hooks.example.test", addrs...)
			raw := "http://hooks.example.test:" + port + "/hook"
			Expect(outbound.ValidateURL(raw, allowLoopback)).To(Succeed())
			refusedWhenSent(ctx, raw, allowLoopback)
		},
		Entry("loopback", false, "127.0.0.1"),
		Entry("IPv6 loopback", false, "::1"),
		Entry("the metadata address", true, "169.254.169.254"),
		Entry("a private address", true, "10.1.2.3"),
		Entry("a private address among others", true, "192.168.7.7", "172.20.0.1"),
		Entry("IPv6 unique local", true, "fd00::53"),
		Entry("IPv6 link-local", true, "fe80::53"),
		Entry("an IPv4-mapped private address", true, "::ffff:10.0.0.7"),
	)

	It("reaches an allowed address through the same resolver, so the refusals above are decisions, not lookup failures", func(ctx SpecContext) {
		publish("allowed.example.test", "127.0.0.1")
		resp, err := client.Do(ctx, get("http://allowed.example.test:"+port+"/"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(resp.Body)).To(Equal("hello"))
	})

	It("checks every new connection, so a name that starts resolving to a private address is refused from then on", func(ctx SpecContext) {
		srv.Config.SetKeepAlivesEnabled(false)
		publish("rebind.example.test", "127.0.0.1")
		raw := "http://rebind.example.test:" + port + "/"
		_, err := client.Do(ctx, get(raw))
		Expect(err).NotTo(HaveOccurred())

		dns.SetAddrs("rebind.example.test", netip.MustParseAddr("10.0.0.1"))
		_, err = client.Do(ctx, get(raw))
		Expect(errors.Is(err, outbound.ErrRefusedDestination)).To(BeTrue(), "got %v", err)
		Expect(srv.hits.Load()).To(BeEquivalentTo(1))
	})

	DescribeTable("a redirect is answered as it is and never followed, whatever its target",
		func(ctx SpecContext, location string) {
			publish("inside.example.test", "10.0.0.1")
			redirector := newTarget(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, expandPort(location, port), http.StatusFound)
			})
			resp, err := client.Do(ctx, get(redirector.URL))
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.StatusCode).To(Equal(http.StatusFound))

			sdk, err := client.HTTPClient().Do(get(redirector.URL).WithContext(ctx))
			Expect(err).NotTo(HaveOccurred())
			Expect(sdk.StatusCode).To(Equal(http.StatusFound))
			Expect(sdk.Body.Close()).To(Succeed())
			Expect(redirector.hits.Load()).To(BeEquivalentTo(2))
			Expect(srv.hits.Load()).To(BeZero())
		},
		Entry("the metadata address", "http://169.254.169.254/latest/meta-data/"),
		Entry("a private address", "http://10.0.0.1/"),
		Entry("a decimal loopback", "http://2130706433:PORT/"),
		Entry("a name resolving to a private address", "http://inside.example.test/"),
		Entry("an allowed loopback server", "http://127.0.0.1:PORT/"),
	)
})

const privateMsg = "url must not point to a private, loopback or reserved address"

// expandPort puts the test server's port where a URL says PORT.
func expandPort(raw, port string) string { return strings.Replace(raw, "PORT", port, 1) }
