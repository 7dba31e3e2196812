package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.opentelemetry.io/otel"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/motionstudio/platform/pkg/telemetry"
)

// otelVars are the variables the specs set; each spec starts with none of them.
var otelVars = []string{
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
	"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME",
	"OTEL_RESOURCE_ATTRIBUTES",
}

// collector is an OTLP/HTTP receiver that keeps the export requests it gets.
type collector struct {
	requests chan *collectortrace.ExportTraceServiceRequest
	url      string
}

func newCollector() *collector {
	c := &collector{requests: make(chan *collectortrace.ExportTraceServiceRequest, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer GinkgoRecover()
		Expect(r.URL.Path).To(Equal("/v1/traces"))
		body, err := io.ReadAll(r.Body)
		Expect(err).NotTo(HaveOccurred())
		req := &collectortrace.ExportTraceServiceRequest{}
		Expect(proto.Unmarshal(body, req)).To(Succeed())
		c.requests <- req
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	DeferCleanup(srv.Close)
	c.url = srv.URL
	return c
}

// resourceAttr is the string attribute key of the first resource in req.
func resourceAttr(req *collectortrace.ExportTraceServiceRequest, key string) string {
	for _, kv := range req.GetResourceSpans()[0].GetResource().GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// exportSpan sets up tracing for service, ends one span named "upload", shuts the pipeline down
// and answers the export request c received.
func exportSpan(c *collector, service string) *collectortrace.ExportTraceServiceRequest {
	shutdown, err := telemetry.Setup(context.Background(), service)
	Expect(err).NotTo(HaveOccurred())
	_, span := otel.Tracer("spec").Start(context.Background(), "upload")
	span.End()
	Expect(shutdown(context.Background())).To(Succeed())
	var req *collectortrace.ExportTraceServiceRequest
	Eventually(c.requests).Should(Receive(&req))
	return req
}

var _ = Describe("setting up tracing", func() {
	BeforeEach(func() {
		for _, k := range otelVars {
			if v, ok := os.LookupEnv(k); ok {
				DeferCleanup(os.Setenv, k, v)
				Expect(os.Unsetenv(k)).To(Succeed())
			}
		}
		prevProvider, prevPropagator := otel.GetTracerProvider(), otel.GetTextMapPropagator()
		DeferCleanup(func() {
			otel.SetTracerProvider(prevProvider)
			otel.SetTextMapPropagator(prevPropagator)
		})
	})

	DescribeTable("installs nothing when the environment does not ask for an exporter",
		func(env map[string]string) {
			for k, v := range env {
				GinkgoT().Setenv(k, v)
			}
			before := otel.GetTracerProvider()
			shutdown, err := telemetry.Setup(context.Background(), "identity-svc")
			Expect(err).NotTo(HaveOccurred())
			Expect(telemetry.Enabled()).To(BeFalse())
			Expect(otel.GetTracerProvider()).To(BeIdenticalTo(before))
			Expect(shutdown(context.Background())).To(Succeed())
		},
		Entry("no endpoint", map[string]string{}),
		Entry("the SDK disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"}),
		Entry("the traces exporter none", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces", "OTEL_TRACES_EXPORTER": "none"}),
	)

	It("exports spans over OTLP/HTTP under the service's name, flushing them on shutdown", func() {
		c := newCollector()
		GinkgoT().Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.url)
		req := exportSpan(c, "content-svc")
		Expect(resourceAttr(req, "service.name")).To(Equal("content-svc"))
		Expect(req.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0].GetName()).To(Equal("upload"))
	})

	It("takes the service name and resource attributes from the environment when given", func() {
		c := newCollector()
		GinkgoT().Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", c.url+"/v1/traces")
		GinkgoT().Setenv("OTEL_SERVICE_NAME", "content-svc-canary")
		GinkgoT().Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=staging")
		req := exportSpan(c, "content-svc")
		Expect(resourceAttr(req, "service.name")).To(Equal("content-svc-canary"))
		Expect(resourceAttr(req, "deployment.environment.name")).To(Equal("staging"))
	})

	DescribeTable("refuses exporters and protocols it does not support",
		func(key, value string) {
			GinkgoT().Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
			GinkgoT().Setenv(key, value)
			_, err := telemetry.Setup(context.Background(), "agentteam-svc")
			Expect(err).To(MatchError(ContainSubstring(value)))
		},
		Entry("a zipkin exporter", "OTEL_TRACES_EXPORTER", "zipkin"),
		Entry("OTLP over HTTP with JSON", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
	)
})
