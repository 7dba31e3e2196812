package httpx_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/logx"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/testkit"
)

type readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

var _ = Describe("health and readiness", func() {
	It("reports the process alive", func() {
		srv := start(httpx.Options{Service: "health"}, nil)
		res := srv.get("/healthz")
		Expect(res.status).To(Equal(http.StatusOK))
		Expect(res.body).To(MatchJSON(`{"status":"ok"}`))
	})

	It("goes unavailable while Postgres is unreachable and ready again once it is back", func() {
		admin, err := url.Parse(testkit.AdminDSN())
		Expect(err).NotTo(HaveOccurred())
		proxy := testkit.NewTCPProxy(admin.Host)
		admin.Host = proxy.Addr()

		ctx := context.Background()
		db, err := pgdb.Open(ctx, pgdb.Config{DSN: admin.String(), MaxOpenConns: 2, MaxIdleConns: 1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(pgdb.Close, db)

		srv := start(httpx.Options{Service: "ready", Checks: []httpx.Check{
			{Name: "postgres", Fn: func(ctx context.Context) error { return pgdb.Ping(ctx, db) }},
			{Name: "always", Fn: func(context.Context) error { return nil }},
		}}, nil)
		ready := func() (int, readiness) {
			res := srv.get("/readyz")
			var r readiness
			Expect(json.Unmarshal([]byte(res.body), &r)).To(Succeed(), res.body)
			return res.status, r
		}

		status, r := ready()
		Expect(status).To(Equal(http.StatusOK))
		Expect(r).To(Equal(readiness{Status: "ok", Checks: map[string]string{"postgres": "ok", "always": "ok"}}))

		proxy.Cut()
		Eventually(func(g Gomega) {
			status, r := ready()
			g.Expect(status).To(Equal(http.StatusServiceUnavailable))
			g.Expect(r.Status).To(Equal("unavailable"))
			g.Expect(r.Checks["postgres"]).To(ContainSubstring("pgdb: ping"))
			g.Expect(r.Checks["always"]).To(Equal("ok"))
		}).Should(Succeed())

		proxy.Restore()
		Eventually(func(g Gomega) {
			status, r := ready()
			g.Expect(status).To(Equal(http.StatusOK))
			g.Expect(r.Checks["postgres"]).To(Equal("ok"))
		}).WithTimeout(10 * time.Second).Should(Succeed())
	})

	It("reports a check that does not answer within 2s as timed out", func() {
		srv := start(httpx.Options{Service: "ready", Checks: []httpx.Check{
			{Name: "stuck", Fn: func(ctx context.Context) error { <-ctx.Done(); return nil }},
		}}, nil)
		res := srv.get("/readyz")
		Expect(res.status).To(Equal(http.StatusServiceUnavailable))
		Expect(res.body).To(MatchJSON(`{"status":"unavailable","checks":{"stuck":"timed out after 2s"}}`))
	})
})

var _ = Describe("metrics and the API document", func() {
	It("counts requests by method, route template and status", func() {
		srv := start(httpx.Options{Service: "metrics"}, func(e *echo.Echo) {
			e.GET("/things/:id", func(c echo.Context) error { return c.String(http.StatusOK, c.Param("id")) })
		})
		Expect(srv.get("/things/1").status).To(Equal(http.StatusOK))
		Expect(srv.get("/things/2").status).To(Equal(http.StatusOK))
		Expect(srv.get("/nowhere").status).To(Equal(http.StatusNotFound))

		Eventually(func() string { return srv.get("/metrics").body }).Should(And(
			ContainSubstring(`http_requests_total{method="GET",route="/things/:id",service="metrics",status="200"} 2`),
			ContainSubstring(`http_request_duration_seconds_count{method="GET",route="/things/:id",service="metrics",status="200"} 2`),
			ContainSubstring(`http_requests_total{method="GET",route="unmatched",service="metrics",status="404"} 1`),
			ContainSubstring("go_goroutines"),
			ContainSubstring("process_cpu_seconds_total"),
		))
	})

	It("keeps the series bounded whatever methods and paths clients invent", func() {
		rec := testkit.RecordSpans()
		srv := start(httpx.Options{Service: "bounded"}, func(e *echo.Echo) {
			e.GET("/things/:id", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
		})
		paths := []string{"/things/%d", "/things/%d/more", "/%d", "/nowhere/%d/deeper"}
		for i := range 1000 {
			method := http.MethodGet
			if i%2 == 1 {
				method = fmt.Sprintf("RTM%d", rand.IntN(1<<30))
			}
			srv.do(method, fmt.Sprintf(paths[i%len(paths)], rand.IntN(1<<30)), nil)
		}

		series := func() []string {
			var out []string
			for line := range strings.Lines(srv.get("/metrics").body) {
				if strings.HasPrefix(line, "http_requests_total{") && strings.Contains(line, `service="bounded"`) {
					out = append(out, line)
				}
			}
			return out
		}
		Eventually(series).Should(ContainElement(HavePrefix(`http_requests_total{method="_OTHER",route="unmatched",service="bounded",status="404"}`)))
		Expect(len(series())).To(BeNumerically("<=", 8), "series: %v", series())
		Expect(series()).NotTo(ContainElement(ContainSubstring("RTM")))
		Expect(srv.logLines()).NotTo(ContainElement(HaveKeyWithValue("method", HavePrefix("RTM"))))
		Eventually(rec.Ended).Should(ContainElement(WithTransform(func(s sdktrace.ReadOnlySpan) string { return s.Name() }, Equal("HTTP unmatched"))))
	})

	It("keeps each server's metrics apart", func() {
		a := start(httpx.Options{Service: "a"}, nil)
		b := start(httpx.Options{Service: "b"}, nil)
		Expect(a.get("/healthz").status).To(Equal(http.StatusOK))
		Expect(b.get("/metrics").body).NotTo(ContainSubstring(`route="/healthz"`))
	})

	It("serves the OpenAPI document converted to JSON", func() {
		doc := []byte(`openapi: 3.0.3
info:
  title: Test API
  version: "1.0"
paths:
  /things:
    get:
      responses:
        200:
          description: ok
components:
  schemas:
    base: &base
      type: object
      nullable: false
    thing:
      <<: *base
      description: a thing
      example: 2024-01-02
`)
		srv := start(httpx.Options{Service: "docs", OpenAPI: doc}, nil)
		res := srv.get("/openapi.json")
		Expect(res.status).To(Equal(http.StatusOK))
		Expect(res.header.Get("Content-Type")).To(Equal("application/json"))
		Expect(res.body).To(MatchJSON(`{
			"openapi": "3.0.3",
			"info": {"title": "Test API", "version": "1.0"},
			"paths": {"/things": {"get": {"responses": {"200": {"description": "ok"}}}}},
			"components": {"schemas": {
				"base": {"type": "object", "nullable": false},
				"thing": {"type": "object", "nullable": false, "description": "a thing", "example": "2024-01-02"}
			}}
		}`))
	})

	It("refuses an OpenAPI document that is not YAML", func() {
		_, err := httpx.New(httpx.Options{Service: "docs", OpenAPI: []byte("paths: [unclosed")})
		Expect(err).To(MatchError(ContainSubstring("openapi")))
	})

	It("serves the AsyncAPI document as given, and nothing without one", func() {
		doc := `{"asyncapi": "3.0.0", "info": {"title": "Test events", "version": "1.0.0"}}`
		srv := start(httpx.Options{Service: "docs", AsyncAPI: []byte(doc)}, nil)
		res := srv.get("/asyncapi.json")
		Expect(res.status).To(Equal(http.StatusOK))
		Expect(res.header.Get("Content-Type")).To(Equal("application/json"))
		Expect(res.body).To(MatchJSON(doc))

		Expect(start(httpx.Options{Service: "none"}, nil).get("/asyncapi.json").status).To(Equal(http.StatusNotFound))
	})

	It("refuses an AsyncAPI document that is not JSON", func() {
		_, err := httpx.New(httpx.Options{Service: "docs", AsyncAPI: []byte(`{"asyncapi": `)})
		Expect(err).To(MatchError(ContainSubstring("asyncapi")))
	})
})

var _ = Describe("graceful shutdown", func() {
	// slowServer serves /slow, which answers once release is closed.
	slowServer := func(shutdownTimeout time.Duration) (addr string, started chan struct{}, release func(), stop context.CancelFunc, done chan error) {
		srv, err := httpx.New(httpx.Options{
			Service: "slow",
			Config:  httpx.Config{Addr: "127.0.0.1:0", RequestTimeout: shutdownTimeout / 2, ShutdownTimeout: shutdownTimeout},
			Logger:  logx.New(GinkgoWriter, "slow", "debug"),
		})
		Expect(err).NotTo(HaveOccurred())
		started, released := make(chan struct{}), make(chan struct{})
		var once sync.Once
		release = func() { once.Do(func() { close(released) }) }
		DeferCleanup(release)
		srv.Echo.GET("/slow", func(c echo.Context) error {
			close(started)
			<-released
			return c.String(http.StatusOK, "done")
		})
		srv.Echo.GET("/until-deadline", func(c echo.Context) error {
			close(started)
			<-c.Request().Context().Done()
			return c.Request().Context().Err()
		})
		bound, err := srv.Listen()
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithCancel(context.Background())
		DeferCleanup(cancel)
		done = make(chan error, 1)
		go func() { done <- srv.Serve(ctx) }()
		return bound.String(), started, release, cancel, done
	}

	type answer struct {
		status int
		body   string
		err    error
	}
	call := func(url string) chan answer {
		out := make(chan answer, 1)
		go func() {
			res, err := http.Get(url)
			if err != nil {
				out <- answer{err: err}
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			out <- answer{status: res.StatusCode, body: string(b), err: err}
		}()
		return out
	}
	refused := func(addr string) func() error {
		return func() error {
			conn, err := net.Dial("tcp", addr)
			if err == nil {
				_ = conn.Close()
			}
			return err
		}
	}

	It("finishes an in-flight request after the stop signal while refusing new connections", func() {
		addr, started, release, stop, done := slowServer(10 * time.Second)
		inFlight := call("http://" + addr + "/slow")
		Eventually(started).Should(BeClosed())

		stop()
		Eventually(refused(addr)).Should(HaveOccurred())
		Consistently(done, 200*time.Millisecond).ShouldNot(Receive())

		release()
		Eventually(inFlight).Should(Receive(Equal(answer{status: http.StatusOK, body: "done"})))
		Eventually(done).Should(Receive(BeNil()))
	})

	It("answers a request that runs until its deadline, however late before the stop it was accepted", func() {
		addr, started, _, stop, done := slowServer(time.Second)
		inFlight := call("http://" + addr + "/until-deadline")
		Eventually(started).Should(BeClosed())

		stop()
		var got answer
		Eventually(inFlight).Should(Receive(&got))
		Expect(got.err).NotTo(HaveOccurred())
		Expect(got.status).To(Equal(http.StatusServiceUnavailable))
		Eventually(done).Should(Receive(BeNil()))
	})

	It("refuses a shutdown timeout that a request's deadline could outlast, naming both variables", func() {
		_, err := httpx.New(httpx.Options{Service: "slow", Config: httpx.Config{RequestTimeout: 25 * time.Second, ShutdownTimeout: 20 * time.Second}})
		Expect(err).To(MatchError(And(ContainSubstring("HTTP_SHUTDOWN_TIMEOUT (20s)"), ContainSubstring("HTTP_REQUEST_TIMEOUT (25s)"))))
	})

	It("gives up on requests that outlast the shutdown timeout and reports it", func() {
		addr, started, _, stop, done := slowServer(100 * time.Millisecond)
		call("http://" + addr + "/slow")
		Eventually(started).Should(BeClosed())

		stop()
		Eventually(done).Should(Receive(MatchError(ContainSubstring("httpx: shutdown"))))
	})
})
