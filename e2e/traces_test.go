package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("tracing a request through the outbox, the bus and a job", func() {
	It("shows one trace in Jaeger: request, SQL, outbox publish, consumer, SQL, job, webhook POST", func() {
		jaeger := testkit.StartJaeger()
		base, env := tracedIdentity(jaeger.OTLPEndpoint)

		By("subscribing a webhook receiver to api_key.created")
		slug := "traces-" + randomHex(5)
		tenant := tracedAdmin(env, "create-tenant", "-slug", slug, "-name", "Traces", "-email", "ops@"+slug+".test")
		email := "admin@" + slug + ".test"
		tracedAdmin(env, "create-user", "-tenant", slug, "-email", email, "-password", "correct-horse-battery", "-tenant-admin")
		token := tracedAdmin(env, "token", "-tenant", slug, "-email", email, "-ttl", "30m")["access_token"].(string)
		tenantID := tenant["id"].(string)
		received := make(chan http.Header, 4)
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			received <- r.Header.Clone()
		}))
		DeferCleanup(receiver.Close)
		code, _, body := call(http.MethodPost, base+"/v1/tenants/"+tenantID+"/webhooks", token,
			jsonBody(map[string]any{"name": "traces", "url": receiver.URL + "/hooks", "events": []string{"api_key.created"}}))
		Expect(code).To(Equal(http.StatusCreated), string(body))

		By("creating an API key under a caller's trace")
		traceID, callerSpan := randomHex(16), randomHex(8)
		code, _, body = call(http.MethodPost, base+"/v1/tenants/"+tenantID+"/api-keys", token,
			jsonBody(map[string]any{"name": "traced", "scopes": []string{"renders:read"}}),
			"traceparent", "00-"+traceID+"-"+callerSpan+"-01")
		Expect(code).To(Equal(http.StatusCreated), string(body))
		var hook http.Header
		Eventually(received).WithTimeout(60 * time.Second).Should(Receive(&hook))

		var spans []testkit.JaegerSpan
		var chain traceChain
		Eventually(func() error {
			var err error
			if spans, err = jaeger.Trace(traceID); err != nil {
				return err
			}
			chain, err = findChain(spans, callerSpan)
			return err
		}).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		AddReportEntry("spans of trace "+traceID, describeSpans(spans))

		By("keeping every span in identity-svc's one trace")
		for _, s := range spans {
			Expect(s.Service).To(Equal("identity-svc"), s.OperationName)
		}
		By("recording the request's SQL under its server span, without parameter values")
		Expect(chain.sqlUnder(chain.server)).NotTo(BeEmpty())
		By("publishing the outbox row under the request's span and consuming it under the publish span")
		Expect(chain.event.Parent()).To(Equal(chain.server.SpanID))
		Expect(chain.fanOut.Parent()).To(Equal(chain.event.SpanID))
		Expect(chain.sqlUnder(chain.fanOut)).NotTo(BeEmpty())
		By("publishing the delivery job under the consumer and running it in a job span")
		Expect(chain.jobEvent.Parent()).To(Equal(chain.fanOut.SpanID))
		Expect(chain.jobWake.Parent()).To(Equal(chain.jobEvent.SpanID))
		Expect(chain.job.Parent()).To(Equal(chain.jobWake.SpanID))
		Expect(chain.sqlUnder(chain.job)).NotTo(BeEmpty())
		Expect(chain.post.Parent()).To(Equal(chain.job.SpanID))
		Expect(chain.post.Tag("server.address")).To(Equal("127.0.0.1"))
		Expect(chain.post.Tag("http.response.status_code")).To(Equal("200"))
		By("handing the POST's span to the receiver in its traceparent header")
		Expect(hook.Get("traceparent")).To(Equal("00-" + traceID + "-" + chain.post.SpanID + "-01"))

		By("keeping secrets out of the spans")
		for _, s := range spans {
			for _, t := range s.Tags {
				v := fmt.Sprint(t.Value)
				Expect(v).NotTo(ContainSubstring(token), "%s %s", s.OperationName, t.Key)
				Expect(v).NotTo(ContainSubstring("/hooks"), "%s %s", s.OperationName, t.Key)
				if t.Key == "db.query.text" {
					Expect(v).NotTo(ContainSubstring(tenantID), "%s: a parameter value", s.OperationName)
				}
			}
		}
	})
})

// traceChain is the path of spans the spec follows through one trace.
type traceChain struct {
	byID                                                map[string]testkit.JaegerSpan
	server, event, fanOut, jobEvent, jobWake, job, post testkit.JaegerSpan
}

// findChain finds, in spans, the server span under the caller's span callerSpan and the path
// from it to the webhook POST, or says which span it has not found yet.
func findChain(spans []testkit.JaegerSpan, callerSpan string) (traceChain, error) {
	c := traceChain{byID: map[string]testkit.JaegerSpan{}}
	for _, s := range spans {
		c.byID[s.SpanID] = s
	}
	one := func(what string, match func(s testkit.JaegerSpan) bool) (testkit.JaegerSpan, error) {
		for _, s := range spans {
			if match(s) {
				return s, nil
			}
		}
		return testkit.JaegerSpan{}, fmt.Errorf("no %s span yet among %d", what, len(spans))
	}
	child := func(parent testkit.JaegerSpan, prefix string) func(s testkit.JaegerSpan) bool {
		return func(s testkit.JaegerSpan) bool {
			return s.Parent() == parent.SpanID && strings.HasPrefix(s.OperationName, prefix)
		}
	}
	var err error
	if c.server, err = one("server", func(s testkit.JaegerSpan) bool { return s.Parent() == callerSpan }); err != nil {
		return c, err
	}
	if c.event, err = one("event publish", child(c.server, "publish identity.")); err != nil {
		return c, err
	}
	// The quest consumer handles the event too; the fan-out is the process span with a job publish under it.
	for _, s := range spans {
		if !child(c.event, "process identity.")(s) {
			continue
		}
		if jobEvent, err := one("job publish", child(s, "publish jobs.")); err == nil {
			c.fanOut, c.jobEvent = s, jobEvent
		}
	}
	if c.jobEvent.SpanID == "" {
		return c, fmt.Errorf("no fan-out span with a job publish under it yet")
	}
	if c.jobWake, err = one("job wake-up", child(c.jobEvent, "process jobs.")); err != nil {
		return c, err
	}
	if c.job, err = one("job", child(c.jobWake, "job webhook.delivery")); err != nil {
		return c, err
	}
	if c.post, err = one("webhook POST", child(c.job, "POST")); err != nil {
		return c, err
	}
	return c, nil
}

// sqlUnder are the PostgreSQL spans below parent.
func (c traceChain) sqlUnder(parent testkit.JaegerSpan) []testkit.JaegerSpan {
	var out []testkit.JaegerSpan
	for _, s := range c.byID {
		if s.Tag("db.system.name") != "postgresql" {
			continue
		}
		for p := s.Parent(); p != ""; p = c.byID[p].Parent() {
			if p == parent.SpanID {
				Expect(s.Tag("db.query.text")).NotTo(BeEmpty())
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// describeSpans lists spans as "name (service) <- parent name", in the order Jaeger gave them.
func describeSpans(spans []testkit.JaegerSpan) string {
	names := map[string]string{}
	for _, s := range spans {
		names[s.SpanID] = s.OperationName
	}
	var b strings.Builder
	for _, s := range spans {
		parent := names[s.Parent()]
		if parent == "" {
			parent = "(caller " + s.Parent() + ")"
		}
		fmt.Fprintf(&b, "%s [%s] (%s) <- %s\n", s.OperationName, s.SpanID, s.Service, parent)
	}
	return b.String()
}

// tracedIdentity starts an identity-svc of its own (database, bus prefix, port) that exports
// its spans to otlp within about 100ms, and answers its base URL and environment.
func tracedIdentity(otlp string) (string, []string) {
	GinkgoHelper()
	_, dsn := testkit.NewDatabase("e2e_traces")
	bus := testkit.Bus("e2e_traces")
	port := freePorts(1)[0]
	env := make([]string, 0, len(p.IdentityEnv)+5)
	for _, kv := range p.IdentityEnv {
		key, _, _ := strings.Cut(kv, "=")
		if key != "HTTP_ADDR" && key != "DATABASE_URL" && key != "NATS_SUBJECT_PREFIX" {
			env = append(env, kv)
		}
	}
	env = append(env,
		fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", port),
		"DATABASE_URL="+dsn,
		"NATS_SUBJECT_PREFIX="+bus.Subject(""),
		"OTEL_EXPORTER_OTLP_ENDPOINT="+otlp,
		"OTEL_BSP_SCHEDULE_DELAY=100",
	)
	cmd := exec.Command(p.IdentityBin, "serve") // #nosec G204 -- the suite's own binary
	cmd.Env = env
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		session.Terminate()
		Eventually(session).WithTimeout(30 * time.Second).Should(gexec.Exit())
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	Eventually(func() int { return status(base + "/readyz") }).WithTimeout(60 * time.Second).Should(Equal(http.StatusOK))
	return base, env
}

// tracedAdmin runs `identity-svc admin args...` with env and decodes its JSON answer.
func tracedAdmin(env []string, args ...string) map[string]any {
	GinkgoHelper()
	cmd := exec.Command(p.IdentityBin, append([]string{"admin"}, args...)...) // #nosec G204 -- the suite's own binary
	cmd.Env = env
	session, err := gexec.Start(cmd, nil, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Eventually(session).WithTimeout(30*time.Second).Should(gexec.Exit(0), "identity-svc admin %v", args)
	var out map[string]any
	Expect(json.Unmarshal(session.Out.Contents(), &out)).To(Succeed())
	return out
}

func jsonBody(v any) *bytes.Reader {
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return bytes.NewReader(b)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
