package httpx

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/logx"
)

const maxRequestIDLen = 128

// saneRequestID accepts an incoming X-Request-ID only when it is short and made of characters
// that are safe in headers and logs.
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '-', r == '_', r == '.', r == ':':
		default:
			return false
		}
	}
	return true
}

// requestIDMiddleware keeps a sane incoming X-Request-ID or makes a UUID v7, echoes it in the
// response and puts it into the request context's log attributes.
func requestIDMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		id := req.Header.Get(echo.HeaderXRequestID)
		if !saneRequestID(id) {
			v7, err := uuid.NewV7()
			if err != nil {
				v7 = uuid.New()
			}
			id = v7.String()
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		c.SetRequest(req.WithContext(logx.WithAttrs(req.Context(), slog.String("request_id", id))))
		return next(c)
	}
}

// tracerName names the instrumentation scope of the HTTP server spans.
const tracerName = "github.com/motionstudio/platform/pkg/httpx"

// traceRequests continues the caller's W3C trace (traceparent) in a server span named for the
// route template, so that outgoing calls and events carry it on, and puts the span's trace id
// into the log attributes. Probes and scrapes get no span. The span ends with the answer's
// status code; 5xx answers mark it as an error. The tracer is looked up per request from the
// global provider, which costs next to nothing while no SDK is installed.
func traceRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ctx := propagation.TraceContext{}.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
		if quietPath(req.URL.Path) {
			c.SetRequest(req.WithContext(logx.WithTraceID(ctx)))
			return next(c)
		}
		route := routeOf(c)
		method := methodLabel(req.Method)
		attrs := []attribute.KeyValue{
			attribute.String("http.request.method", method),
			attribute.String("http.route", route),
			attribute.String("url.path", req.URL.Path),
		}
		name := method
		if method == otherMethod {
			// The conventions name such a span "HTTP" and keep the method sent as an attribute.
			name = "HTTP"
			attrs = append(attrs, attribute.String("http.request.method_original", req.Method))
		}
		ctx, span := otel.Tracer(tracerName).Start(ctx, name+" "+route,
			trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		c.SetRequest(req.WithContext(logx.WithTraceID(ctx)))
		err := next(c)
		status := c.Response().Status
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		return err
	}
}

// routeOf is the route template the request matched, or "unmatched" (every path no route
// knows, so that the label stays bounded).
func routeOf(c echo.Context) string {
	if route := c.Path(); route != "" {
		return route
	}
	return "unmatched"
}

// quietPath reports the paths logged at debug: probes and scrapes would drown the access log.
func quietPath(path string) bool {
	return path == "/healthz" || path == "/readyz" || path == "/metrics"
}

// countingBody counts the request bytes the handler reads.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

// observe answers errors through the error handler so the final status is known, then records
// the request metrics and writes the access log line.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		req := c.Request()
		body := &countingBody{ReadCloser: req.Body}
		if req.Body != nil && req.Body != http.NoBody {
			req.Body = body
		}

		if err := next(c); err != nil {
			c.Error(err)
		}

		elapsed := time.Since(start)
		res := c.Response()
		route := routeOf(c)
		method := methodLabel(req.Method)
		s.metrics.observe(method, route, res.Status, elapsed)

		level := slog.LevelInfo
		if quietPath(req.URL.Path) {
			level = slog.LevelDebug
		}
		attrs := []slog.Attr{
			slog.String("method", method),
			slog.String("path", req.URL.Path),
			slog.String("route", route),
			slog.Int("status", res.Status),
			slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
			slog.Int64("bytes_in", body.n),
			slog.Int64("bytes_out", res.Size),
			slog.String("request_id", RequestID(c)),
			slog.String("remote_ip", c.RealIP()),
		}
		if sc := trace.SpanContextFromContext(c.Request().Context()); sc.HasTraceID() {
			attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
		}
		// The request context already carries request_id for logx loggers; the access line names
		// its fields itself so that they are not repeated.
		s.log.LogAttrs(context.Background(), level, "http request", attrs...)
		return nil
	}
}

// recoverPanics turns a handler panic into an error answered as a 500 and logs the stack; the
// process keeps serving. http.ErrAbortHandler keeps its meaning of aborting the response.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			if r == http.ErrAbortHandler {
				panic(r)
			}
			s.log.ErrorContext(c.Request().Context(), "handler panicked",
				slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("httpx: handler panic: %v", r)
		}()
		return next(c)
	}
}

// limitBody refuses bodies longer than Config.BodyLimit: at once when Content-Length says so,
// otherwise when the handler reads past the limit (Bind reports it as TooLarge).
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.large(c) {
			return next(c)
		}
		req := c.Request()
		if req.ContentLength > s.cfg.BodyLimit {
			return tooLarge(s.cfg.BodyLimit)
		}
		if req.Body != nil && req.Body != http.NoBody {
			req.Body = http.MaxBytesReader(c.Response().Writer, req.Body, s.cfg.BodyLimit)
		}
		return next(c)
	}
}

func tooLarge(limit int64) *apperr.Error {
	return apperr.E(apperr.TooLarge, "", fmt.Sprintf("The request body is larger than %d bytes.", limit))
}

// requestDeadline bounds each request's context by Config.RequestTimeout.
func (s *Server) requestDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.large(c) {
			return next(c)
		}
		req := c.Request()
		ctx, cancel := context.WithTimeout(req.Context(), s.cfg.RequestTimeout)
		defer cancel()
		c.SetRequest(req.WithContext(ctx))
		return next(c)
	}
}
