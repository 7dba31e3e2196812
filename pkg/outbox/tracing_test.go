package outbox_test

import (
	"net/http"

	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/testkit"
)

// spanNamed is the ended span called name, or nil.
func spanNamed(rec *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	for _, s := range rec.Ended() {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

// serve runs an httpx server on a free port until the spec ends and answers its base URL.
func serve(register func(e *echo.Echo)) string {
	srv, err := httpx.New(httpx.Options{Service: "outbox", Config: httpx.Config{Addr: "127.0.0.1:0"}, Logger: log})
	Expect(err).NotTo(HaveOccurred())
	register(srv.Echo)
	addr, err := srv.Listen()
	Expect(err).NotTo(HaveOccurred())
	testkit.RunUntilCleanup(srv.Serve)
	return "http://" + addr.String()
}

var _ = Describe("a request whose event a consumer handles", func() {
	It("is one trace: the HTTP server span, the relay's publish span and the consumer's span, each the parent of the next", func() {
		rec := testkit.RecordSpans()
		stream, subject := newStream(bus)
		durable := unique("d")
		handler := &effectHandler{consumer: durable}
		relay := outbox.NewRelay(db, bus, log, outbox.RelayConfig{})
		writer := outbox.NewWriter("content-svc").Notify(relay.Kick)
		base := serve(func(e *echo.Echo) {
			e.POST("/projects/:id", func(c echo.Context) error {
				if _, err := createProject(c.Request().Context(), writer, subject, c.Param("id"), nil); err != nil {
					return err
				}
				return c.NoContent(http.StatusCreated)
			})
		})
		runRelay(relay)
		consume(bus, natsx.ConsumerSpec{Stream: stream, Durable: durable}, handler.handle)

		req, err := http.NewRequest(http.MethodPost, base+"/projects/p1", nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		res, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Body.Close()).To(Succeed())
		Expect(res.StatusCode).To(Equal(http.StatusCreated))

		var server, publish, process sdktrace.ReadOnlySpan
		Eventually(func() sdktrace.ReadOnlySpan {
			server = spanNamed(rec, "POST /projects/:id")
			publish = spanNamed(rec, "publish "+subject)
			process = spanNamed(rec, "process "+subject)
			return process
		}).ShouldNot(BeNil())
		Expect(server).NotTo(BeNil())
		Expect(publish).NotTo(BeNil())

		By("continuing the caller's trace in a server span named for the route")
		Expect(server.SpanKind()).To(Equal(trace.SpanKindServer))
		Expect(server.SpanContext().TraceID().String()).To(Equal("4bf92f3577b34da6a3ce929d0e0e4736"))
		Expect(server.Parent().SpanID().String()).To(Equal("00f067aa0ba902b7"))
		Expect(server.Attributes()).To(ContainElements(
			attribute.String("http.route", "/projects/:id"),
			attribute.Int("http.response.status_code", http.StatusCreated),
		))

		By("publishing the outbox row in a producer span under the request's span")
		Expect(publish.SpanKind()).To(Equal(trace.SpanKindProducer))
		Expect(publish.SpanContext().TraceID()).To(Equal(server.SpanContext().TraceID()))
		Expect(publish.Parent().SpanID()).To(Equal(server.SpanContext().SpanID()))

		By("handling the message in a consumer span under the publish span, which the handler's context carries")
		Expect(process.SpanKind()).To(Equal(trace.SpanKindConsumer))
		Expect(process.SpanContext().TraceID()).To(Equal(server.SpanContext().TraceID()))
		Expect(process.Parent().SpanID()).To(Equal(publish.SpanContext().SpanID()))
		Expect(process.Attributes()).To(ContainElement(attribute.String("messaging.consumer.group.name", durable)))
		Expect(trace.SpanContextFromContext(handler.context(0)).SpanID()).To(Equal(process.SpanContext().SpanID()))
	})
})
