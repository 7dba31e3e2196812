// Package telemetry installs a service's OpenTelemetry trace pipeline from the standard OTEL_*
// environment variables: an OTLP exporter behind a batch span processor when an OTLP endpoint
// is configured, and nothing at all otherwise, so that the global no-op tracer provider keeps
// unconfigured processes free of tracing cost.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Environment variables Setup reads itself; the exporter, the batch span processor and the
// sampler read the rest of the OTEL_* variables (headers, timeouts, OTEL_BSP_*,
// OTEL_TRACES_SAMPLER) on their own.
const (
	envEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envSDKDisabled    = "OTEL_SDK_DISABLED"
	envTracesExporter = "OTEL_TRACES_EXPORTER"
)

// Enabled reports whether the environment asks for traces to be exported: an OTLP endpoint is
// set, the SDK is not disabled and the traces exporter is not "none".
func Enabled() bool {
	if strings.EqualFold(os.Getenv(envSDKDisabled), "true") {
		return false
	}
	if strings.EqualFold(os.Getenv(envTracesExporter), "none") {
		return false
	}
	return os.Getenv(envEndpoint) != "" || os.Getenv(envTracesEndpoint) != ""
}

// Setup installs, when Enabled, a global tracer provider that batches spans to the OTLP
// exporter of OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL (http/protobuf, the default, or grpc), with
// a resource named service unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise,
// and the W3C trace-context propagator. It returns the function that flushes and stops the
// pipeline; when not Enabled it installs nothing and that function does nothing. It fails when
// OTEL_TRACES_EXPORTER names an exporter other than otlp, the protocol is not supported, or the
// exporter or resource cannot be built.
func Setup(ctx context.Context, service string) (shutdown func(context.Context) error, err error) {
	if !Enabled() {
		return func(context.Context) error { return nil }, nil
	}
	if exp := os.Getenv(envTracesExporter); exp != "" && !strings.EqualFold(exp, "otlp") {
		return nil, fmt.Errorf("telemetry: %s=%q: only otlp and none are supported", envTracesExporter, exp)
	}
	exporter, err := newExporter(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(service)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("telemetry: resource: %w", err), exporter.Shutdown(ctx))
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return tp.Shutdown, nil
}

// FlushTimeout bounds how long Stop waits for the last spans to reach the collector.
const FlushTimeout = 5 * time.Second

// Stop calls shutdown (Setup's) within FlushTimeout, at a process's exit, and logs the spans it
// could not deliver on log: nothing else can be done with them then.
func Stop(shutdown func(context.Context) error, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), FlushTimeout)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		log.Warn("flushing traces failed; the last spans are lost", "error", err)
	}
}

// newExporter builds the OTLP span exporter for the configured protocol; the exporter takes
// its endpoint, headers, TLS and timeout from the environment.
func newExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	protocol := os.Getenv(envTracesProtocol)
	if protocol == "" {
		protocol = os.Getenv(envProtocol)
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch protocol {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("telemetry: OTLP protocol %q: only http/protobuf and grpc are supported", protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: otlp exporter: %w", err)
	}
	return exp, nil
}
