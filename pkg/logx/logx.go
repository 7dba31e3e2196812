// Package logx builds the platform's structured JSON logger and carries request-scoped
// attributes (request id, trace id) through a context.
package logx

import (
	"context"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// New returns a JSON slog logger writing to w at the named level (debug, info, warn, error),
// with the service name on every record.
func New(w io.Writer, service, level string) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn", "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})
	return slog.New(contextHandler{h}).With(slog.String("service", service))
}

type ctxKey struct{}

// WithAttrs returns a context whose log records (through a logx logger's *Context methods)
// carry the given attributes.
func WithAttrs(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev, _ := ctx.Value(ctxKey{}).([]slog.Attr)
	merged := make([]slog.Attr, 0, len(prev)+len(attrs))
	merged = append(append(merged, prev...), attrs...)
	return context.WithValue(ctx, ctxKey{}, merged)
}

// WithTraceID returns ctx with the trace id of its span, when it has one, among its log
// attributes (as "trace_id"), so that every line logged with it can be found from the trace.
func WithTraceID(ctx context.Context) context.Context {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		return WithAttrs(ctx, slog.String("trace_id", sc.TraceID().String()))
	}
	return ctx
}

// contextHandler adds the attributes stored by WithAttrs to each record.
type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if attrs, ok := ctx.Value(ctxKey{}).([]slog.Attr); ok {
		r.AddAttrs(attrs...)
	}
	return h.Handler.Handle(ctx, r)
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}
