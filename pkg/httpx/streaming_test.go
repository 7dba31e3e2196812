package httpx_test

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("trace context", func() {
	It("continues the caller's trace in the request context and the logs", func() {
		rec := testkit.RecordSpans()
		srv := start(httpx.Options{Service: "trace"}, func(e *echo.Echo) {
			e.GET("/trace", func(c echo.Context) error {
				sc := trace.SpanContextFromContext(c.Request().Context())
				return c.String(http.StatusOK, sc.TraceID().String())
			})
		})
		res := srv.get("/trace", "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		Expect(res.body).To(Equal("4bf92f3577b34da6a3ce929d0e0e4736"))
		Eventually(rec.Ended).Should(HaveLen(1))
		Expect(rec.Ended()[0].Parent().SpanID().String()).To(Equal("00f067aa0ba902b7"))
		Eventually(srv.logLines).Should(ContainElement(And(
			HaveKeyWithValue("route", "/trace"),
			HaveKeyWithValue("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"),
		)))
	})

	It("starts a trace when tracing is on and the caller sent none, and logs the server span's trace id", func() {
		rec := testkit.RecordSpans()
		srv := start(httpx.Options{Service: "trace"}, func(e *echo.Echo) {
			e.GET("/items/:id", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
		})

		Expect(srv.get("/items/7").status).To(Equal(http.StatusNoContent))

		Eventually(rec.Ended).Should(HaveLen(1))
		span := rec.Ended()[0]
		Expect(span.Name()).To(Equal("GET /items/:id"))
		Expect(span.Parent().IsValid()).To(BeFalse())
		Expect(span.Attributes()).To(ContainElement(attribute.Int("http.response.status_code", http.StatusNoContent)))
		Eventually(srv.logLines).Should(ContainElement(And(
			HaveKeyWithValue("route", "/items/:id"),
			HaveKeyWithValue("trace_id", span.SpanContext().TraceID().String()),
		)))
	})
})

var _ = Describe("long requests", func() {
	// An upload that pauses longer than the server's read timeout between its two halves.
	var (
		srv       *running
		firstHalf chan struct{}
	)

	BeforeEach(func() {
		firstHalf = make(chan struct{}, 1)
		srv = start(httpx.Options{
			Service:   "stream",
			Config:    httpx.Config{ReadTimeout: 100 * time.Millisecond},
			LargeBody: func(c echo.Context) bool { return c.Path() == "/stream" },
		}, func(e *echo.Echo) {
			e.POST("/stream", func(c echo.Context) error {
				if c.QueryParam("long") == "true" {
					httpx.AllowLongRequest(c, 10*time.Second)
				}
				head := make([]byte, 5)
				if _, err := io.ReadFull(c.Request().Body, head); err != nil {
					return err
				}
				firstHalf <- struct{}{}
				rest, err := io.ReadAll(c.Request().Body)
				if err != nil {
					return err
				}
				return c.String(http.StatusOK, fmt.Sprintf("%d bytes", len(head)+len(rest)))
			})
		})
	})

	type outcome struct {
		status int
		body   string
	}
	upload := func(query string) (*io.PipeWriter, chan outcome) {
		body, w := io.Pipe()
		out := make(chan outcome, 1)
		go func() {
			defer GinkgoRecover()
			res, err := http.Post(srv.base+"/stream"+query, "application/octet-stream", body)
			if err != nil {
				out <- outcome{status: -1, body: err.Error()}
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			out <- outcome{status: res.StatusCode, body: string(b)}
		}()
		return w, out
	}

	It("lets a route extend the read deadline for a slow upload", func() {
		w, out := upload("?long=true")
		_, err := w.Write([]byte("hello"))
		Expect(err).NotTo(HaveOccurred())
		Eventually(firstHalf).Should(Receive())

		Consistently(out, 400*time.Millisecond).ShouldNot(Receive())
		_, err = w.Write([]byte("world"))
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Close()).To(Succeed())
		Eventually(out).Should(Receive(Equal(outcome{status: http.StatusOK, body: "10 bytes"})))
	})

	It("cuts an upload that stalls past the read timeout otherwise", func() {
		w, out := upload("")
		DeferCleanup(w.Close)
		_, err := w.Write([]byte("hello"))
		Expect(err).NotTo(HaveOccurred())
		Eventually(firstHalf).Should(Receive())

		var o outcome
		Eventually(out).Should(Receive(&o))
		Expect(o).NotTo(Equal(outcome{status: http.StatusOK, body: "10 bytes"}))
		Expect(o.status).NotTo(Equal(http.StatusOK))
	})
})
