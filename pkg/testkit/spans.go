package testkit

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"
)

// RecordSpans installs, until the spec ends, a global tracer provider that records every ended
// span, and answers the recorder. The spec's cleanup installs a no-op provider rather than the
// one found before: otel's global delegate keeps pointing at the first SDK provider ever set, so
// "restoring" it would leave a later spec tracing with this one.
func RecordSpans() *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	otel.SetTracerProvider(tp)
	ginkgo.DeferCleanup(func(ctx context.Context) error {
		otel.SetTracerProvider(noop.NewTracerProvider())
		return tp.Shutdown(ctx)
	})
	return rec
}
