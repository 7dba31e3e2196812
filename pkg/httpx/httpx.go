// Package httpx bootstraps a service's echo v4 HTTP server the same way everywhere: request ids,
// trace-context propagation, panic recovery, a JSON access log, Prometheus metrics, a body limit,
// a per-request deadline, health and readiness routes, the OpenAPI document, graceful shutdown and
// the single error handler that turns apperr kinds into HTTP answers.
package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ErrorStyle selects how errors are written to clients.
type ErrorStyle int

const (
	// ProblemJSON answers errors as RFC 9457 application/problem+json documents.
	ProblemJSON ErrorStyle = iota
	// PlainText answers errors with the message as a text/plain body; 401 and 403 have no body.
	PlainText
)

// Config holds the listen address, the body limit and the server timeouts.
type Config struct {
	// Addr is the listen address; each service fills in 127.0.0.1:<its port> (8081, 8082, 8083).
	Addr string `env:"HTTP_ADDR"`
	// BodyLimit is the largest request body in bytes (streaming upload routes set their own).
	BodyLimit int64 `env:"HTTP_BODY_LIMIT" default:"1048576"`
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration `env:"HTTP_READ_HEADER_TIMEOUT" default:"5s"`
	// ReadTimeout bounds reading a whole request.
	ReadTimeout time.Duration `env:"HTTP_READ_TIMEOUT" default:"30s"`
	// WriteTimeout bounds writing a response.
	WriteTimeout time.Duration `env:"HTTP_WRITE_TIMEOUT" default:"30s"`
	// IdleTimeout closes idle keep-alive connections.
	IdleTimeout time.Duration `env:"HTTP_IDLE_TIMEOUT" default:"120s"`
	// RequestTimeout is the deadline of each request's context.
	RequestTimeout time.Duration `env:"HTTP_REQUEST_TIMEOUT" default:"25s"`
	// ShutdownDelay is how long the server keeps serving after the shutdown signal, answering
	// GET /readyz with 503 meanwhile, so that load balancers take it out of rotation before it
	// stops accepting connections. A Config literal's zero stops accepting at once.
	ShutdownDelay time.Duration `env:"HTTP_SHUTDOWN_DELAY" default:"5s"`
	// ShutdownTimeout is how long SIGTERM waits for in-flight requests to finish once the
	// server stopped accepting connections. It must exceed RequestTimeout: a request accepted
	// just before then runs until its deadline at most and must still get its answer.
	ShutdownTimeout time.Duration `env:"HTTP_SHUTDOWN_TIMEOUT" default:"30s"`
	// TrustedProxies are the CIDRs (the gateway, the ingress) whose X-Forwarded-For is believed
	// when deciding a client's address for logs and per-IP rate limits. Empty trusts nobody:
	// the address is the TCP peer's, so a client cannot spoof it.
	TrustedProxies []string `env:"HTTP_TRUSTED_PROXIES"`
	// PprofAddr, when set (a loopback address such as 127.0.0.1:6060), serves Go's runtime
	// profiles (net/http/pprof) there, for benchmarks; empty serves none.
	PprofAddr string `env:"HTTP_PPROF_ADDR"`
}

// withDefaults fills zero values with the documented defaults, so a Config literal in a test
// behaves like one loaded from an empty environment.
func (c Config) withDefaults() Config {
	setDuration := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	if c.BodyLimit <= 0 {
		c.BodyLimit = 1 << 20
	}
	setDuration(&c.ReadHeaderTimeout, 5*time.Second)
	setDuration(&c.ReadTimeout, 30*time.Second)
	setDuration(&c.WriteTimeout, 30*time.Second)
	setDuration(&c.IdleTimeout, 120*time.Second)
	setDuration(&c.RequestTimeout, 25*time.Second)
	setDuration(&c.ShutdownTimeout, 30*time.Second)
	return c
}

// Check is one readiness probe of a dependency, run by GET /readyz.
type Check struct {
	Name string
	Fn   func(ctx context.Context) error
}

// Options configures New.
type Options struct {
	// Service names the service in the request metrics (label service).
	Service    string
	Config     Config
	Logger     *slog.Logger
	ErrorStyle ErrorStyle
	Checks     []Check
	// OpenAPI is the service's api/openapi.yaml, served as JSON at GET /openapi.json.
	OpenAPI []byte
	// AsyncAPI is the service's AsyncAPI document (JSON, events.AsyncAPI), served at
	// GET /asyncapi.json.
	AsyncAPI []byte
	// LargeBody reports the routes exempt from the body limit and the request timeout
	// (streaming uploads).
	LargeBody func(c echo.Context) bool
}

// Server is a configured echo instance plus the http.Server that runs it. Register routes on
// Echo; register service metrics on Registry, which GET /metrics exposes.
type Server struct {
	Echo     *echo.Echo
	Registry *prometheus.Registry

	cfg     Config
	log     *slog.Logger
	checks  []Check
	openapi []byte
	async   []byte
	large   func(c echo.Context) bool
	metrics *httpMetrics
	srv     *http.Server
	// draining is set when shutdown begins; GET /readyz then answers 503.
	draining atomic.Bool

	mu sync.Mutex
	ln net.Listener
}

// New builds the server with its middleware and built-in routes. It fails when the OpenAPI
// document is not valid YAML, the AsyncAPI document not valid JSON, or the metrics cannot be
// registered.
func New(opts Options) (*Server, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	large := opts.LargeBody
	if large == nil {
		large = func(echo.Context) bool { return false }
	}
	s := &Server{
		Echo:     echo.New(),
		Registry: prometheus.NewRegistry(),
		cfg:      opts.Config.withDefaults(),
		log:      log,
		checks:   opts.Checks,
		large:    large,
	}
	if s.cfg.ShutdownTimeout <= s.cfg.RequestTimeout {
		return nil, fmt.Errorf("httpx: HTTP_SHUTDOWN_TIMEOUT (%s) must exceed HTTP_REQUEST_TIMEOUT (%s): a request accepted just before the server stops accepting must get its answer",
			s.cfg.ShutdownTimeout, s.cfg.RequestTimeout)
	}
	if len(opts.OpenAPI) > 0 {
		doc, err := yamlToJSON(opts.OpenAPI)
		if err != nil {
			return nil, fmt.Errorf("httpx: openapi document: %w", err)
		}
		s.openapi = doc
	}
	if len(opts.AsyncAPI) > 0 {
		if !json.Valid(opts.AsyncAPI) {
			return nil, errors.New("httpx: asyncapi document is not valid json")
		}
		s.async = opts.AsyncAPI
	}
	m, err := newHTTPMetrics(s.Registry, opts.Service)
	if err != nil {
		return nil, err
	}
	s.metrics = m
	if err := s.Registry.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("httpx: register go collector: %w", err)
	}
	if err := s.Registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("httpx: register process collector: %w", err)
	}

	e := s.Echo
	extractor, err := ipExtractor(s.cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	e.IPExtractor = extractor
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = ErrorHandler(opts.ErrorStyle, log)
	// Recovery sits inside the access log and metrics so that a panic's 500 is logged and counted
	// like any other answer.
	e.Use(s.closeWhileDraining, requestIDMiddleware, traceRequests, s.observe, s.recoverPanics, refuseBadText, s.limitBody, s.requestDeadline)

	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{Registry: s.Registry})))
	if s.openapi != nil {
		e.GET("/openapi.json", func(c echo.Context) error {
			return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, s.openapi)
		})
	}
	if s.async != nil {
		e.GET("/asyncapi.json", func(c echo.Context) error {
			return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, s.async)
		})
	}

	s.srv = &http.Server{
		Handler:           e,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Register adds collectors to Registry, which GET /metrics exposes. It fails when one of them
// cannot be registered (a metric name registered twice).
func (s *Server) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := s.Registry.Register(c); err != nil {
			return fmt.Errorf("httpx: register metrics: %w", err)
		}
	}
	return nil
}

// ipExtractor trusts X-Forwarded-For only from the given proxies.
func ipExtractor(cidrs []string) (echo.IPExtractor, error) {
	if len(cidrs) == 0 {
		return echo.ExtractIPDirect(), nil
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, c := range cidrs {
		_, n, err := net.ParseCIDR(c)
		if err != nil {
			return nil, fmt.Errorf("httpx: trusted proxy %q: %w", c, err)
		}
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...), nil
}

// Listen binds Config.Addr (port 0 picks a free port) and returns the bound address. It fails
// when the address is empty, already bound by this server, or cannot be bound.
func (s *Server) Listen() (net.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		return nil, errors.New("httpx: listen: already listening")
	}
	if s.cfg.Addr == "" {
		return nil, errors.New("httpx: listen: no address configured")
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("httpx: listen %s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
	return ln.Addr(), nil
}

// Serve answers requests on the listener bound by Listen until ctx is done. Then GET /readyz
// answers 503 at once while requests are still served for ShutdownDelay, so that load balancers
// stop sending; then the server stops accepting connections, closes idle keep-alive ones and
// waits up to ShutdownTimeout for in-flight requests to finish. It returns nil on a clean stop
// and an error when serving fails or the drain times out.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln == nil {
		return errors.New("httpx: serve: Listen was not called")
	}
	s.log.InfoContext(ctx, "http server listening", slog.String("addr", ln.Addr().String()))

	served := make(chan error, 2)
	go func() { served <- s.srv.Serve(ln) }()
	if s.cfg.PprofAddr != "" {
		go func() {
			if err := serveProfiles(ctx, s.cfg.PprofAddr); err != nil {
				served <- err
			}
		}()
	}

	select {
	case err := <-served:
		return fmt.Errorf("httpx: serve: %w", err)
	case <-ctx.Done():
	}

	s.draining.Store(true)
	s.log.InfoContext(ctx, "http server shutting down: not ready", slog.Duration("delay", s.cfg.ShutdownDelay))
	if s.cfg.ShutdownDelay > 0 {
		t := time.NewTimer(s.cfg.ShutdownDelay)
		select {
		case err := <-served:
			t.Stop()
			return fmt.Errorf("httpx: serve: %w", err)
		case <-t.C:
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := s.srv.Shutdown(shutdownCtx); err != nil {
		_ = s.srv.Close()
		return fmt.Errorf("httpx: shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("httpx: serve: %w", err)
	}
	s.log.InfoContext(ctx, "http server stopped")
	return nil
}

// Run is Listen, unless the caller already listened, followed by Serve.
func (s *Server) Run(ctx context.Context) error {
	s.mu.Lock()
	listening := s.ln != nil
	s.mu.Unlock()
	if !listening {
		if _, err := s.Listen(); err != nil {
			return err
		}
	}
	return s.Serve(ctx)
}

// AllowLongRequest extends the read and write deadlines of the current request's connection by d
// from now, for streaming uploads and downloads that outlast the server timeouts. Routes that use
// it should also be exempt through Options.LargeBody. Writers that cannot set deadlines are left
// unchanged.
func AllowLongRequest(c echo.Context, d time.Duration) {
	rc := http.NewResponseController(c.Response().Writer)
	deadline := time.Now().Add(d)
	_ = rc.SetReadDeadline(deadline)
	_ = rc.SetWriteDeadline(deadline)
}

// RequestID is the id of the current request, as sent in the X-Request-ID response header.
func RequestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}

// closeWhileDraining answers with Connection: close once shutdown began, so that each
// keep-alive connection a client still uses is closed after its answer during ShutdownDelay,
// and few remain for Shutdown to close under a request the client is just sending. (Closing
// idle connections at once instead would race every client about to reuse one.)
func (s *Server) closeWhileDraining(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.draining.Load() {
			c.Response().Header().Set(echo.HeaderConnection, "close")
		}
		return next(c)
	}
}
