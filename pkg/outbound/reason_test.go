package outbound_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/outbound"
)

// anIPAddress matches an IPv4 address or a bracketed or bare IPv6 address.
var anIPAddress = regexp.MustCompile(`\d{1,3}(\.\d{1,3}){3}|\[?[0-9a-fA-F]*:[0-9a-fA-F:]+\]?`)

var _ = Describe("the reason a request failed, fit to show the user", func() {
	reasonOf := func(ctx context.Context, opts outbound.Options, url string) string {
		GinkgoHelper()
		_, err := outbound.New(opts).Do(ctx, get(url))
		Expect(err).To(HaveOccurred())
		reason := outbound.Reason(err)
		Expect(reason).NotTo(MatchRegexp(anIPAddress.String()), "the reason names no address")
		Expect(err.Error()).To(ContainSubstring("127.0.0.1"), "the error itself keeps the detail for the log")
		return reason
	}

	It("says a refused destination is not allowed, without the address or the range", func(ctx SpecContext) {
		srv := newTarget(hello)
		Expect(reasonOf(ctx, outbound.Options{}, srv.URL)).To(Equal("The server's address is not allowed."))
	})

	It("says a closed port refused the connection", func(ctx SpecContext) {
		Expect(reasonOf(ctx, outbound.Options{AllowLoopback: true}, "http://127.0.0.1:1/")).To(Equal("connection refused"))
	})

	It("says a server that does not answer in time timed out", func(ctx SpecContext) {
		srv := newTarget(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		Expect(reasonOf(ctx, outbound.Options{AllowLoopback: true, Timeout: 200 * time.Millisecond}, srv.URL)).To(Equal("timeout"))
	})

	It("says a server whose certificate is not trusted failed the TLS handshake", func(ctx SpecContext) {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(hello))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.StartTLS()
		DeferCleanup(srv.Close)
		Expect(reasonOf(ctx, outbound.Options{AllowLoopback: true}, srv.URL)).To(Equal("TLS handshake failed"))
	})

	It("says only that the connection failed for any other error, and nothing for no error", func() {
		Expect(outbound.Reason(fmt.Errorf("dial tcp 10.0.0.7:80: %w", errors.New("something internal")))).To(Equal("connection failed"))
		Expect(outbound.Reason(nil)).To(BeEmpty())
	})
})
