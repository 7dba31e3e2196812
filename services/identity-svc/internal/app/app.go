// Package app is identity-svc's composition root: it wires configuration, infrastructure,
// domain services and the HTTP adapter, and runs them.
package app

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"net"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/crypt"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/pkg/telemetry"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/api"
	"github.com/motionstudio/platform/services/identity-svc/internal/cache"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/accountapi"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/authapi"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/billingapi"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
	"github.com/motionstudio/platform/services/identity-svc/internal/token"
)

// Name is the service name used in logs, metrics and the NATS connection.
const Name = "identity-svc"

// App is a running identity service.
type App struct {
	log    *slog.Logger
	db     *gorm.DB
	rdb    *redis.Client
	bus    *natsx.Bus
	server *httpx.Server
	relay  *outbox.Relay
	// heldAccounts are the users refreshes read, kept in memory while its listener listens;
	// every store that writes users or tenants tells it.
	heldAccounts *cache.Accounts
	// workers are what Run runs beside the relay: the HTTP server, the accounts cache's
	// listener, the signing keys' reloader, the password-reset worker and the account
	// (accounts.go) and billing (billing.go) consumers and sweepers.
	workers []service.Worker
	closers service.Closers
	// keys are the signing keys, reread from the database by a worker while Run runs.
	keys *token.Ring
}

// Migrate applies the outbox's and the service's migrations.
func Migrate(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	db, err := pgdb.Open(ctx, cfg.DB)
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	return migrate(ctx, db, log)
}

func migrate(ctx context.Context, db *gorm.DB, log *slog.Logger) error {
	return pgdb.Migrate(ctx, db, log, outbox.Migrations, store.Migrations)
}

// New connects to every dependency and builds the service. The caller must Close it.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (_ *App, err error) {
	a := &App{log: log}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	stopTracing, err := telemetry.Setup(ctx, Name)
	if err != nil {
		return nil, err
	}
	a.closers.Add(func() { telemetry.Stop(stopTracing, log) })
	if a.db, err = pgdb.Open(ctx, cfg.DB); err != nil {
		return nil, err
	}
	a.closers.Add(func() { _ = pgdb.Close(a.db) })
	if a.rdb, err = redisx.Connect(ctx, cfg.Redis); err != nil {
		return nil, err
	}
	a.closers.Add(func() { _ = a.rdb.Close() })
	if a.bus, err = natsx.Connect(ctx, cfg.NATS, Name, log); err != nil {
		return nil, err
	}
	a.closers.Add(a.bus.Close)
	if err = a.bus.EnsureStreams(ctx, events.StreamIdentityEvents, events.StreamJobs); err != nil {
		return nil, err
	}
	key, err := signingKey(cfg)
	if err != nil {
		return nil, err
	}
	if a.keys, err = newRing(ctx, a.db, cfg, key); err != nil {
		return nil, err
	}
	clients, err := token.ParseClients(cfg.ServiceClients, cfg.ServiceClientAudiences, cfg.Audience)
	if err != nil {
		return nil, err
	}
	writer := outbox.NewWriter(events.SourceIdentity)
	issuer := token.NewIssuer(a.keys, token.IssuerConfig{AccessTTL: cfg.AccessTokenTTL, ServiceTTL: cfg.ServiceTokenTTL,
		Audience: cfg.Audience, Clients: clients}, service.Now)
	limiter := redisx.NewLimiter(a.rdb, cfg.Redis.KeyPrefix+"ratelimit:")
	a.heldAccounts = cache.NewAccounts(cfg.Auth.RefreshCacheUsers)

	asyncDoc, ok := events.AsyncAPI(events.ServiceIdentity)
	if !ok {
		return nil, fmt.Errorf("app: no AsyncAPI document for %s", Name)
	}
	a.server, err = httpx.New(httpx.Options{
		Service: Name, Config: cfg.HTTP, Logger: log, ErrorStyle: httpx.ProblemJSON, OpenAPI: api.OpenAPI, AsyncAPI: asyncDoc,
		Checks: []httpx.Check{
			{Name: "postgres", Fn: func(ctx context.Context) error { return pgdb.Ping(ctx, a.db) }},
			{Name: "redis", Fn: func(ctx context.Context) error { return redisx.Ping(ctx, a.rdb) }},
			{Name: "nats", Fn: a.bus.Ping},
		},
	})
	if err != nil {
		return nil, err
	}
	dbStats, err := pgdb.NewStatsCollector(ctx, a.db)
	if err != nil {
		return nil, err
	}
	listener, err := cache.NewListener(a.heldAccounts, cfg.DB.DSN, log, a.server.Registry)
	if err != nil {
		return nil, err
	}
	a.workers = append(a.workers, a.server, listener,
		service.WorkerFunc(func(ctx context.Context) error { return runRing(ctx, a.keys, cfg, log) }))
	err = a.server.Register(dbStats, outbox.NewLagCollector(a.db), a.bus.ConsumerCollector(), pgdb.NewJobQueueCollector(a.db, store.WebhookQueueQuery+" UNION ALL "+store.ResetQueueQuery))
	if err != nil {
		return nil, err
	}
	authHandler, sessions, err := newAuthHandler(a, cfg, key, issuer, limiter)
	if err != nil {
		return nil, err
	}
	accountHandler, err := newAccountHandler(a, cfg, key, writer, limiter, sessions)
	if err != nil {
		return nil, err
	}
	verifier := authn.NewStaticVerifier(a.keys, cfg.Issuer, cfg.Audience)
	areas := []httpx.Area{
		{Policies: httpapi.Policies(), Mount: httpapi.NewHandler(issuer, a.keys, cfg.Issuer, limiter, cfg.TokenRateLimit).Mount},
		{Policies: accountapi.Policies(verifier), Mount: accountHandler.Mount},
		{Policies: authapi.Policies(verifier), Mount: authHandler.Mount},
		{Policies: billingapi.Policies(verifier), Mount: newBillingHandler(a, cfg, writer).Mount},
	}
	for i := range areas {
		areas[i].Policies = authapi.LiveSessions(areas[i].Policies, sessions)
	}
	if err = httpx.Mount(a.server.Echo, api.OpenAPI, areas...); err != nil {
		return nil, err
	}
	a.relay = outbox.NewRelay(a.db, a.bus, log, outbox.RelayConfig{})
	return a, nil
}

// Listen binds the HTTP address ahead of Run, so that a caller can read the port it got
// (tests listen on port 0).
func (a *App) Listen() (net.Addr, error) { return a.server.Listen() }

// Run serves HTTP, runs the consumers and workers and relays the outbox until ctx is done or
// one of them fails. On shutdown /readyz turns 503 at once and HTTP drains while the
// consumers stop fetching and finish or nak what they hold; the relay then makes a last pass
// over what they wrote, and Close closes the connections.
func (a *App) Run(ctx context.Context) error {
	return a.relay.Beside(ctx, func(ctx context.Context) error { return service.RunAll(ctx, a.workers...) })
}

// Close releases what New opened, in reverse order, and flushes the spans not yet exported.
func (a *App) Close() { a.closers.Close() }

// signingKey loads the Ed25519 key once; it signs tokens and, without ENCRYPTION_KEYS or
// ENCRYPTION_KEY, seeds the keys that seal secrets at rest.
func signingKey(cfg config.Config) (ed25519.PrivateKey, error) {
	return token.LoadKey(token.KeySource{Inline: cfg.SigningKey, File: cfg.SigningKeyFile, Generate: cfg.GenerateSigningKey})
}

// Purposes of the sealed secrets; each derives its own key when no encryption key is set.
const (
	sealMFA      = "motionstudio identity-svc mfa secrets v1"
	sealWebhooks = "motionstudio identity-svc webhook secrets v1"
)

// newSealer builds the AES-256-GCM key ring for one purpose's secrets at rest: ENCRYPTION_KEYS
// or ENCRYPTION_KEY when set, otherwise a key derived from the signing key with HKDF under the
// purpose label.
func newSealer(cfg config.Config, signing ed25519.PrivateKey, purpose string) (*crypt.Ring, error) {
	return crypt.LoadRing(cfg.Auth.EncryptionKeys, cfg.Auth.EncryptionKey, func() ([]byte, error) {
		return crypt.DeriveKey(signing, purpose)
	})
}
