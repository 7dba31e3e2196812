package telemetry

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// Provider returns a tracer provider that looks the global provider up on every span it starts.
// Instrumentation that keeps the tracer it was built with (the SQL tracer pgdb installs) is
// given this one, so that it follows the provider Setup installs after the connection was made,
// and a test's provider, instead of pinning the first one it saw.
func Provider() trace.TracerProvider { return globalProvider{} }

type globalProvider struct{ embedded.TracerProvider }

func (globalProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return globalTracer{name: name, opts: opts}
}

type globalTracer struct {
	embedded.Tracer
	name string
	opts []trace.TracerOption
}

func (t globalTracer) Start(ctx context.Context, spanName string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return otel.GetTracerProvider().Tracer(t.name, t.opts...).Start(ctx, spanName, opts...)
}
