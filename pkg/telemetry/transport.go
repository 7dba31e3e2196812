package telemetry

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// httpTracer names the instrumentation scope of outbound HTTP client spans.
const httpTracer = "github.com/motionstudio/platform/pkg/telemetry/http"

// Transport returns next wrapped so that each request made under a recording span gets an HTTP
// client span, named for its method, that covers the exchange up to the response headers and
// whose context travels to the server in the traceparent header. A request under no recording
// span (no tracing, or a background call outside any trace) passes through untouched.
//
// The span names the destination by scheme, host and port only: neither the URL's path and
// query (a webhook or callback URL often carries its secret there) nor any header is recorded.
// A nil next means http.DefaultTransport.
func Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{next: next}
}

type transport struct{ next http.RoundTripper }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !trace.SpanFromContext(ctx).IsRecording() {
		return t.next.RoundTrip(req)
	}
	ctx, span := otel.Tracer(httpTracer).Start(ctx, req.Method,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(requestAttrs(req)...))
	defer span.End()
	out := req.Clone(ctx)
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(out.Header))
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		span.SetAttributes(attribute.String("error.type", errorType(err)))
		span.SetStatus(codes.Error, "request failed")
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= http.StatusBadRequest {
		span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
		span.SetStatus(codes.Error, "")
	}
	return resp, nil
}

// requestAttrs are the HTTP client span's attributes of req: the method, the URL's scheme and
// the server's address and port.
func requestAttrs(req *http.Request) []attribute.KeyValue {
	scheme := req.URL.Scheme
	port := req.URL.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", req.Method),
		attribute.String("url.scheme", scheme),
		attribute.String("server.address", req.URL.Hostname()),
	}
	if n, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, attribute.Int("server.port", n))
	}
	return attrs
}

// errorType is the low-cardinality error.type of a failed exchange: "timeout" or the Go type of
// the error. The error's text is not recorded: it may quote the URL.
func errorType(err error) string {
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return "timeout"
	}
	return fmt.Sprintf("%T", err)
}
