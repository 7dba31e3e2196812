package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// JaegerVersion is the Jaeger release StartJaeger runs: its all-in-one binary, built once from
// the module proxy into CacheDir()/bin (the first build takes minutes; later runs reuse it).
const JaegerVersion = "v1.62.0"

// Jaeger is a Jaeger all-in-one process with in-memory storage: an OTLP receiver and the query
// API that reads the traces back.
type Jaeger struct {
	// OTLPEndpoint is the OTLP/HTTP base URL (OTEL_EXPORTER_OTLP_ENDPOINT).
	OTLPEndpoint string
	query        string
}

// CacheDir is where tools built for the tests are kept between runs: MOTIONSTUDIO_CACHE, or
// ~/.cache/motionstudio (the directory scripts/infra.sh builds MinIO into).
func CacheDir() string {
	if dir := os.Getenv("MOTIONSTUDIO_CACHE"); dir != "" {
		return dir
	}
	home, err := os.UserHomeDir()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return filepath.Join(home, ".cache", "motionstudio")
}

// StartJaeger builds the all-in-one binary when the cache lacks it, starts it on free ports of
// 127.0.0.1 until the spec (or container) ends, and waits until it answers.
func StartJaeger() *Jaeger {
	ginkgo.GinkgoHelper()
	bin := jaegerBin()
	otlp, query, grpcOTLP, admin := freePort(), freePort(), freePort(), freePort()
	args := []string{
		fmt.Sprintf("--collector.otlp.http.host-port=127.0.0.1:%d", otlp),
		fmt.Sprintf("--collector.otlp.grpc.host-port=127.0.0.1:%d", grpcOTLP),
		fmt.Sprintf("--query.http-server.host-port=127.0.0.1:%d", query),
		fmt.Sprintf("--query.grpc-server.host-port=127.0.0.1:%d", freePort()),
		fmt.Sprintf("--admin.http.host-port=127.0.0.1:%d", admin),
		fmt.Sprintf("--collector.http-server.host-port=127.0.0.1:%d", freePort()),
		fmt.Sprintf("--collector.grpc-server.host-port=127.0.0.1:%d", freePort()),
		fmt.Sprintf("--http-server.host-port=127.0.0.1:%d", freePort()),
		fmt.Sprintf("--processor.jaeger-binary.server-host-port=127.0.0.1:%d", freePort()),
		fmt.Sprintf("--processor.jaeger-compact.server-host-port=127.0.0.1:%d", freePort()),
		fmt.Sprintf("--processor.zipkin-compact.server-host-port=127.0.0.1:%d", freePort()),
	}
	cmd := exec.Command(bin, args...) // #nosec G204 -- the tests' own Jaeger binary with arguments they built
	// OTEL_TRACES_EXPORTER=none: Jaeger would otherwise export its own spans to 127.0.0.1:4317.
	cmd.Env = append(os.Environ(), "SPAN_STORAGE_TYPE=memory", "COLLECTOR_OTLP_ENABLED=true", "OTEL_TRACES_EXPORTER=none")
	cmd.Stdout, cmd.Stderr = ginkgo.GinkgoWriter, ginkgo.GinkgoWriter
	gomega.Expect(cmd.Start()).To(gomega.Succeed())
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	ginkgo.DeferCleanup(func() {
		// Its storage is in memory: there is nothing to flush, so it is killed.
		_ = cmd.Process.Kill()
		gomega.Eventually(done).WithTimeout(10 * time.Second).Should(gomega.BeClosed())
	})
	j := &Jaeger{OTLPEndpoint: fmt.Sprintf("http://127.0.0.1:%d", otlp), query: fmt.Sprintf("http://127.0.0.1:%d", query)}
	gomega.Eventually(func() error {
		select {
		case <-done:
			return gomega.StopTrying("jaeger exited")
		default:
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", admin))
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("jaeger health: %s", resp.Status)
		}
		return nil
	}).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).Should(gomega.Succeed(), "jaeger did not start")
	return j
}

// jaegerBin is the cached all-in-one binary, built first when absent: go install cannot build
// it (Jaeger's go.mod has a replace directive), so the module is downloaded through the proxy
// and built in its own module directory.
func jaegerBin() string {
	bin := filepath.Join(CacheDir(), "bin", "jaeger-all-in-one-"+JaegerVersion)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	gomega.Expect(os.MkdirAll(filepath.Dir(bin), 0o750)).To(gomega.Succeed())
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	download := exec.Command("go", "mod", "download", "-json", "github.com/jaegertracing/jaeger@"+JaegerVersion)
	download.Env = env
	out, err := download.Output()
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "go mod download jaeger %s", JaegerVersion)
	var mod struct{ Dir string }
	gomega.Expect(json.Unmarshal(out, &mod)).To(gomega.Succeed())
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	build := exec.Command("go", "build", "-trimpath", "-o", tmp, "./cmd/all-in-one") // #nosec G204 -- a fixed build of a pinned module
	build.Dir, build.Env = mod.Dir, env
	build.Stdout, build.Stderr = ginkgo.GinkgoWriter, ginkgo.GinkgoWriter
	ginkgo.By("building Jaeger " + JaegerVersion + " into " + bin + " (once; it takes minutes)")
	gomega.Expect(build.Run()).To(gomega.Succeed(), "go build jaeger all-in-one")
	// Parallel processes may all build; the rename makes whichever finishes last win atomically.
	gomega.Expect(os.Rename(tmp, bin)).To(gomega.Succeed())
	return bin
}

// JaegerSpan is one span of a trace as Jaeger's query API answers it.
type JaegerSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	ProcessID     string `json:"processID"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
	// Service is the service.name of the process that reported the span.
	Service string `json:"-"`
}

// Parent is the span id of the span's CHILD_OF reference, or "".
func (s JaegerSpan) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Tag is the value of the span's tag key, as a string, or "".
func (s JaegerSpan) Tag(key string) string {
	for _, t := range s.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// Trace answers the spans Jaeger holds of the trace traceID (32 hex digits), none when it
// knows no such trace yet.
func (j *Jaeger) Trace(traceID string) ([]JaegerSpan, error) {
	resp, err := http.Get(j.query + "/api/traces/" + strings.ToLower(traceID))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jaeger query: %s", resp.Status)
	}
	var body struct {
		Data []struct {
			Spans     []JaegerSpan `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("jaeger query: %w", err)
	}
	var spans []JaegerSpan
	for _, t := range body.Data {
		for _, s := range t.Spans {
			s.Service = t.Processes[s.ProcessID].ServiceName
			spans = append(spans, s)
		}
	}
	return spans, nil
}
