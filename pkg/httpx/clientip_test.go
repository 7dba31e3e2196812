package httpx_test

import (
	"net/http"

	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/httpx"
)

var _ = Describe("the client address", func() {
	realIP := func(e *echo.Echo) {
		e.GET("/ip", func(c echo.Context) error { return c.String(http.StatusOK, c.RealIP()) })
	}

	It("is the TCP peer by default, whatever X-Forwarded-For claims", func() {
		r := start(httpx.Options{}, realIP)
		Expect(r.get("/ip", "X-Forwarded-For", "203.0.113.9").body).To(Equal("127.0.0.1"))
	})

	It("comes from X-Forwarded-For when the peer is a trusted proxy", func() {
		r := start(httpx.Options{Config: httpx.Config{TrustedProxies: []string{"127.0.0.0/8"}}}, realIP)
		Expect(r.get("/ip", "X-Forwarded-For", "203.0.113.9").body).To(Equal("203.0.113.9"))
	})

	It("refuses a trusted proxy that is not a CIDR", func() {
		_, err := httpx.New(httpx.Options{Config: httpx.Config{TrustedProxies: []string{"gateway"}}})
		Expect(err).To(MatchError(ContainSubstring(`trusted proxy "gateway"`)))
	})
})
