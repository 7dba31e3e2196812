package redisx

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the instrumentation scope of the Redis client spans.
const tracerName = "github.com/motionstudio/platform/pkg/redisx"

// tracingHook gives every command and pipeline made under a recording span a client span that
// follows the OpenTelemetry database conventions: named for the command (GET, EVALSHA, PIPELINE),
// with db.system.name, db.operation.name, db.namespace (the database index) and the server's
// address. Neither keys nor values are recorded: they hold session ids and token hashes. A
// command under no recording span (no tracing, or background work outside any trace) costs one
// context lookup.
type tracingHook struct {
	attrs []attribute.KeyValue
}

// newTracingHook returns the hook for a client of opts.
func newTracingHook(opts *redis.Options) tracingHook {
	attrs := []attribute.KeyValue{
		attribute.String("db.system.name", "redis"),
		attribute.String("db.namespace", strconv.Itoa(opts.DB)),
	}
	if host, port, err := net.SplitHostPort(opts.Addr); err == nil {
		attrs = append(attrs, attribute.String("server.address", host))
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int("server.port", n))
		}
	}
	return tracingHook{attrs: attrs}
}

func (h tracingHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h tracingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !trace.SpanFromContext(ctx).IsRecording() {
			return next(ctx, cmd)
		}
		op := strings.ToUpper(cmd.Name())
		ctx, span := h.start(ctx, op, attribute.String("db.operation.name", op))
		err := next(ctx, cmd)
		end(span, err)
		return err
	}
}

func (h tracingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !trace.SpanFromContext(ctx).IsRecording() {
			return next(ctx, cmds)
		}
		ctx, span := h.start(ctx, "PIPELINE",
			attribute.String("db.operation.name", "PIPELINE"),
			attribute.Int("db.operation.batch.size", len(cmds)))
		err := next(ctx, cmds)
		end(span, err)
		return err
	}
}

func (h tracingHook) start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return otel.Tracer(tracerName).Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(h.attrs...), trace.WithAttributes(attrs...))
}

// end records err, unless it is redis.Nil (a missing key is an answer, not a failure), and ends
// span. The error's text is kept: go-redis errors name the server's reply, not the arguments.
func end(span trace.Span, err error) {
	if err != nil && !errors.Is(err, redis.Nil) {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
