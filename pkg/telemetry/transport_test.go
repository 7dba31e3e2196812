package telemetry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/motionstudio/platform/pkg/telemetry"
	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("outbound HTTP client spans", func() {
	var (
		srv      *httptest.Server
		received chan http.Header
	)
	BeforeEach(func() {
		received = make(chan http.Header, 1)
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			received <- r.Header.Clone()
			w.WriteHeader(http.StatusAccepted)
		}))
		DeferCleanup(srv.Close)
	})

	It("records the exchange under the caller's span, by host only, and hands its context to the server", func() {
		rec := testkit.RecordSpans()
		ctx, parent := otel.Tracer("spec").Start(context.Background(), "job")
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/hooks/s3cret-path?token=s3cret-query", nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer s3cret-header")
		client := &http.Client{Transport: telemetry.Transport(nil)}
		res, err := client.Do(req)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Body.Close()).To(Succeed())
		parent.End()

		Expect(rec.Ended()).To(HaveLen(2))
		span := rec.Ended()[0]
		Expect(span.Name()).To(Equal("POST"))
		Expect(span.SpanKind()).To(Equal(trace.SpanKindClient))
		Expect(span.Parent().SpanID()).To(Equal(parent.SpanContext().SpanID()))
		Expect(span.Attributes()).To(ContainElements(
			attribute.String("http.request.method", "POST"),
			attribute.String("url.scheme", "http"),
			attribute.String("server.address", "127.0.0.1"),
			attribute.Int("http.response.status_code", http.StatusAccepted),
		))
		for _, kv := range span.Attributes() {
			Expect(kv.Value.String()).NotTo(ContainSubstring("s3cret"), "attribute %s", kv.Key)
		}

		By("sending the client span's context in the traceparent header")
		var header http.Header
		Eventually(received).Should(Receive(&header))
		sent := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(header)))
		Expect(sent.SpanID()).To(Equal(span.SpanContext().SpanID()))
		Expect(req.Header.Get("traceparent")).To(BeEmpty(), "the caller's request is not modified")
	})

	It("marks a 5xx answer as an error", func() {
		failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
		}))
		DeferCleanup(failing.Close)
		rec := testkit.RecordSpans()
		ctx, parent := otel.Tracer("spec").Start(context.Background(), "job")
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, failing.URL, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := (&http.Client{Transport: telemetry.Transport(nil)}).Do(req)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Body.Close()).To(Succeed())
		parent.End()
		span := rec.Ended()[0]
		Expect(span.Status().Code).To(Equal(codes.Error))
		Expect(span.Attributes()).To(ContainElement(attribute.String("error.type", "502")))
	})

	It("leaves a request outside any trace untouched", func() {
		rec := testkit.RecordSpans()
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := (&http.Client{Transport: telemetry.Transport(nil)}).Do(req)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Body.Close()).To(Succeed())
		Expect(rec.Ended()).To(BeEmpty())
		var header http.Header
		Eventually(received).Should(Receive(&header))
		Expect(header.Get("traceparent")).To(BeEmpty())
	})
})

var _ = Describe("job spans", func() {
	It("wraps a job's processing in a span under the wake-up's span, recording its failure", func() {
		rec := testkit.RecordSpans()
		ctx, consumer := otel.Tracer("spec").Start(context.Background(), "process jobs")
		failed := errors.New("model unavailable")
		var inner trace.SpanContext
		err := telemetry.Job(ctx, "agent.run", "run-1", func(ctx context.Context) error {
			inner = trace.SpanContextFromContext(ctx)
			return failed
		})
		consumer.End()
		Expect(err).To(MatchError(failed))

		span := rec.Ended()[0]
		Expect(span.Name()).To(Equal("job agent.run"))
		Expect(span.Parent().SpanID()).To(Equal(consumer.SpanContext().SpanID()))
		Expect(span.SpanContext().SpanID()).To(Equal(inner.SpanID()), "the job runs under its span")
		Expect(span.Attributes()).To(ContainElements(
			attribute.String("job.queue", "agent.run"), attribute.String("job.id", "run-1")))
		Expect(span.Status().Code).To(Equal(codes.Error))
	})
})
