package natsx

import (
	"context"
	"math"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the instrumentation scope of the bus's producer and consumer spans.
const tracerName = "github.com/motionstudio/platform/pkg/natsx"

// startSpan starts a producer or consumer span for ev under ctx's span, named after the
// messaging operation and the subject (without the bus prefix), with the OpenTelemetry
// messaging attributes. The tracer is looked up in the global provider each time, so that a
// process without an SDK pays next to nothing and a test can install its own provider.
func startSpan(ctx context.Context, kind trace.SpanKind, operation string, ev Event, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	opType := "send"
	if kind == trace.SpanKindConsumer {
		opType = "process"
	}
	attrs = append(attrs,
		attribute.String("messaging.system", "nats"),
		attribute.String("messaging.operation.name", operation),
		attribute.String("messaging.operation.type", opType),
		attribute.String("messaging.destination.name", ev.Subject),
		attribute.String("messaging.message.id", ev.ID),
		attribute.String("cloudevents.event_type", ev.Type),
	)
	return otel.Tracer(tracerName).Start(ctx, operation+" "+ev.Subject,
		trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// endSpan records err, when there is one, as the span's error status and ends it.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// deliveryAttrs are the consumer span's attributes of one delivery.
func deliveryAttrs(consumer string, delivery uint64) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("messaging.consumer.group.name", consumer),
		attribute.Int64("messaging.nats.delivery_count", int64(min(delivery, math.MaxInt64))),
	}
}
