package telemetry

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// jobTracer names the instrumentation scope of job spans.
const jobTracer = "github.com/motionstudio/platform/pkg/telemetry/job"

// Job runs process, the processing of the claimed job id of queue (for example
// "webhook.delivery"), inside a span named "job <queue>" under ctx's span (the consumer span of
// the wake-up), so that the job's SQL, Redis and HTTP spans hang under one node of the trace. The
// span records process's error, which Job returns unchanged.
func Job(ctx context.Context, queue, id string, process func(ctx context.Context) error) error {
	ctx, span := otel.Tracer(jobTracer).Start(ctx, "job "+queue, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("job.queue", queue), attribute.String("job.id", id)))
	defer span.End()
	err := process(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}
