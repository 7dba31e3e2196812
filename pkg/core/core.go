// Package core is what every service's composition root opens first and runs last: tracing,
// Postgres, NATS with the service's streams, the HTTP server with the standard readiness checks
// and metrics, the outbox relay and, for a service that accepts identity-svc's tokens, their
// verifier and the session revocations it follows. A service's App embeds a Core, adds its own
// workers, closers, checks and HTTP areas to it, and service.Main runs it.
package core

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/labstack/echo/v4"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/revocation"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/pkg/telemetry"
	events "github.com/motionstudio/platform/proto-events"
)

// Options says what Open opens for one service.
type Options struct {
	// Service is the service's name (events.ServiceIdentity and its siblings): it names the
	// traces, the HTTP metrics, the NATS connection and the AsyncAPI document served.
	Service string
	HTTP    httpx.Config
	DB      pgdb.Config
	NATS    natsx.Config
	// Streams are the JetStream streams the service publishes to, ensured at start.
	Streams []string
	// OpenAPI is the service's api/openapi.yaml.
	OpenAPI    []byte
	ErrorStyle httpx.ErrorStyle
	// LargeBody reports the routes exempt from the body limit and the request timeout.
	LargeBody func(c echo.Context) bool
	// Checks are the readiness checks besides Postgres's and NATS's; they run only once Run
	// does, so they may read what the composition root opens after Open.
	Checks []httpx.Check
	// JobQueue is the query of the service's job-queue gauge (pgdb.NewJobQueueCollector).
	JobQueue string
	Relay    outbox.RelayConfig
	// Auth, when set, builds Verifier for identity-svc's tokens, which refuses the tokens of
	// revoked sessions and suspended tenants as the revocation events tell.
	Auth *authn.Remote
}

// Core is what Open opened. The composition root adds its workers to Workers and the release of
// what it opens to Closers.
type Core struct {
	DB     *gorm.DB
	Bus    *natsx.Bus
	Server *httpx.Server
	Relay  *outbox.Relay
	// Verifier checks identity-svc's tokens; nil without Options.Auth.
	Verifier *authn.Verifier
	// Workers are what Run runs beside the relay; Open adds the HTTP server and, with
	// Options.Auth, the follower of session revocations.
	Workers []service.Worker
	Closers service.Closers
}

// Open opens opts' dependencies. On an error it releases what it opened.
func Open(ctx context.Context, opts Options, log *slog.Logger) (_ *Core, err error) {
	c := &Core{}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	stopTracing, err := telemetry.Setup(ctx, opts.Service)
	if err != nil {
		return nil, err
	}
	c.Closers.Add(func() { telemetry.Stop(stopTracing, log) })
	if c.DB, err = pgdb.Open(ctx, opts.DB); err != nil {
		return nil, err
	}
	c.Closers.Add(func() { _ = pgdb.Close(c.DB) })
	if c.Bus, err = natsx.Connect(ctx, opts.NATS, opts.Service, log); err != nil {
		return nil, err
	}
	c.Closers.Add(c.Bus.Close)
	if err = c.Bus.EnsureStreams(ctx, opts.Streams...); err != nil {
		return nil, err
	}
	asyncDoc, ok := events.AsyncAPI(opts.Service)
	if !ok {
		return nil, fmt.Errorf("core: no AsyncAPI document for %s", opts.Service)
	}
	c.Server, err = httpx.New(httpx.Options{
		Service: opts.Service, Config: opts.HTTP, Logger: log, ErrorStyle: opts.ErrorStyle, OpenAPI: opts.OpenAPI,
		AsyncAPI: asyncDoc, LargeBody: opts.LargeBody,
		Checks: append([]httpx.Check{
			{Name: "postgres", Fn: func(ctx context.Context) error { return pgdb.Ping(ctx, c.DB) }},
			{Name: "nats", Fn: c.Bus.Ping},
		}, opts.Checks...),
	})
	if err != nil {
		return nil, err
	}
	c.Workers = append(c.Workers, c.Server)
	if opts.Auth != nil {
		revoked := revocation.NewDenyList()
		c.Verifier, err = authn.NewVerifier(ctx, authn.VerifierConfig{JWKSURL: opts.Auth.JWKSURL, Issuer: opts.Auth.Issuer,
			Audience: opts.Auth.Audience, RefreshInterval: opts.Auth.JWKSRefresh, Revocations: revoked})
		if err != nil {
			return nil, err
		}
		c.Workers = append(c.Workers, service.WorkerFunc(func(ctx context.Context) error { return revoked.Follow(ctx, c.Bus, log, 0) }))
	}
	dbStats, err := pgdb.NewStatsCollector(ctx, c.DB)
	if err != nil {
		return nil, err
	}
	err = c.Server.Register(dbStats, outbox.NewLagCollector(c.DB), c.Bus.ConsumerCollector(), pgdb.NewJobQueueCollector(c.DB, opts.JobQueue))
	if err != nil {
		return nil, err
	}
	c.Relay = outbox.NewRelay(c.DB, c.Bus, log, opts.Relay)
	return c, nil
}

// Migrate applies the outbox's migrations and then the service's.
func Migrate(ctx context.Context, cfg pgdb.Config, log *slog.Logger, own pgdb.Source) error {
	db, err := pgdb.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	return pgdb.Migrate(ctx, db, log, outbox.Migrations, own)
}

// Listen binds the HTTP address ahead of Run, so that a caller can read the port it got
// (tests listen on port 0).
func (c *Core) Listen() (net.Addr, error) { return c.Server.Listen() }

// Run runs the workers and relays the outbox until ctx is done or one of them fails. On
// shutdown /readyz turns 503 at once and HTTP drains while consumers and job workers stop
// fetching and finish or give back what they hold; the relay then makes a last pass over what
// they wrote, and Close closes the connections.
func (c *Core) Run(ctx context.Context) error {
	return c.Relay.Beside(ctx, func(ctx context.Context) error { return service.RunAll(ctx, c.Workers...) })
}

// Close releases what was opened, in reverse order, and flushes the spans not yet exported.
func (c *Core) Close() { c.Closers.Close() }
