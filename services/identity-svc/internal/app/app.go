// Package app is identity-svc's composition root: it wires configuration, infrastructure,
// domain services and the HTTP adapter, and runs them.
package app

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/crypt"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/pglisten"
	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/pkg/telemetry"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/api"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
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
	// auth is the auth service, whose password-reset worker Run runs.
	auth *auth.Service
	// accounts are the user, tenant, API key and webhook parts (accounts.go).
	accounts *accountParts
	// billing are the plan, payment, discount, quest and gift parts (billing.go).
	billing *billingParts
	// heldAccounts are the users refreshes read, kept in memory while its listener listens;
	// every store that writes users or tenants tells it.
	heldAccounts *cache.Accounts
	listener     *pglisten.Listener
	// keys are the signing keys, reread from the database by runKeys while Run runs.
	keys    *token.Ring
	runKeys func(context.Context) error
	// stopTracing flushes and stops the trace pipeline telemetry.Setup installed.
	stopTracing func(context.Context) error
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
	if a.stopTracing, err = telemetry.Setup(ctx, Name); err != nil {
		return nil, err
	}
	if a.db, err = pgdb.Open(ctx, cfg.DB); err != nil {
		return nil, err
	}
	if a.rdb, err = redisx.Connect(ctx, cfg.Redis); err != nil {
		return nil, err
	}
	if a.bus, err = natsx.Connect(ctx, cfg.NATS, Name, log); err != nil {
		return nil, err
	}
	if err = ensureStreams(ctx, a.bus, events.StreamIdentityEvents, events.StreamJobs); err != nil {
		return nil, err
	}
	key, err := signingKey(cfg)
	if err != nil {
		return nil, err
	}
	if a.keys, err = newRing(ctx, a.db, cfg, key); err != nil {
		return nil, err
	}
	a.runKeys = func(ctx context.Context) error { return runRing(ctx, a.keys, cfg, log) }
	clients, err := token.ParseClients(cfg.ServiceClients, cfg.ServiceClientAudiences, cfg.Audience)
	if err != nil {
		return nil, err
	}
	writer := outbox.NewWriter(events.SourceIdentity)
	issuer := token.NewIssuer(a.keys, token.IssuerConfig{AccessTTL: cfg.AccessTokenTTL, ServiceTTL: cfg.ServiceTokenTTL,
		Audience: cfg.Audience, Clients: clients}, now)
	limiter := redisx.NewLimiter(a.rdb, cfg.Redis.KeyPrefix+"ratelimit:")
	a.heldAccounts = cache.NewAccounts(cfg.Auth.RefreshCacheUsers)
	authHandler, sessions, err := newAuthHandler(a, cfg, key, issuer, limiter)
	if err != nil {
		return nil, err
	}

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
	if a.listener, err = cache.NewListener(a.heldAccounts, cfg.DB.DSN, log, a.server.Registry); err != nil {
		return nil, err
	}
	err = a.server.Register(dbStats, outbox.NewLagCollector(a.db), a.bus.ConsumerCollector(), pgdb.NewJobQueueCollector(a.db, store.WebhookQueueQuery))
	if err != nil {
		return nil, err
	}
	verifier := authn.NewStaticVerifier(a.keys, cfg.Issuer, cfg.Audience)
	policies, err := httpx.Merge(httpapi.Policies(), accountapi.Policies(verifier), authapi.Policies(verifier), billingapi.Policies(verifier))
	if err != nil {
		return nil, err
	}
	policies = authapi.LiveSessions(policies, sessions)
	if err = policies.Verify(api.OpenAPI); err != nil {
		return nil, err
	}
	httpapi.Register(a.server.Echo, httpapi.NewHandler(issuer, a.keys, cfg.Issuer, limiter, cfg.TokenRateLimit), policies)
	if a.accounts, err = newAccountParts(a, cfg, key, writer, limiter, sessions); err != nil {
		return nil, err
	}
	accountapi.Register(a.server.Echo, a.accounts.handler, policies)
	authapi.Register(a.server.Echo, authHandler, policies)
	a.billing = newBillingParts(a, cfg, writer)
	billingapi.Register(a.server.Echo, a.billing.handler, policies)
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
	return a.relay.Beside(ctx, func(ctx context.Context) error {
		g, ctx := errgroup.WithContext(ctx)
		g.Go(func() error { return a.server.Run(ctx) })
		g.Go(func() error { return a.auth.RunResets(ctx) })
		g.Go(func() error { return a.listener.Run(ctx) })
		g.Go(func() error { return a.runKeys(ctx) })
		for _, w := range a.accounts.workers {
			g.Go(func() error { return w(ctx) })
		}
		for _, w := range a.billing.workers {
			g.Go(func() error { return w(ctx) })
		}
		return g.Wait()
	})
}

// Close releases every connection New opened and flushes the spans not yet exported.
func (a *App) Close() {
	if a.bus != nil {
		a.bus.Close()
	}
	if a.rdb != nil {
		_ = a.rdb.Close()
	}
	if a.db != nil {
		_ = pgdb.Close(a.db)
	}
	if a.stopTracing != nil {
		telemetry.Stop(a.stopTracing, a.log)
	}
}

// signingKey loads the Ed25519 key once; it signs tokens and, without ENCRYPTION_KEY, seeds the
// keys that seal secrets at rest.
func signingKey(cfg config.Config) (ed25519.PrivateKey, error) {
	return token.LoadKey(token.KeySource{Inline: cfg.SigningKey, File: cfg.SigningKeyFile, Generate: cfg.GenerateSigningKey})
}

// Purposes of the sealed secrets; each derives its own key when ENCRYPTION_KEY is not set.
const (
	sealMFA      = "motionstudio identity-svc mfa secrets v1"
	sealWebhooks = "motionstudio identity-svc webhook secrets v1"
)

// newSealer builds the AES-256-GCM box for one purpose's secrets at rest: ENCRYPTION_KEY when set,
// otherwise a key derived from the signing key with HKDF under the purpose label.
func newSealer(cfg config.Config, signing ed25519.PrivateKey, purpose string) (*crypt.Box, error) {
	if cfg.Auth.EncryptionKey != "" {
		key, err := crypt.ParseKey(cfg.Auth.EncryptionKey)
		if err != nil {
			return nil, err
		}
		return crypt.New(key)
	}
	key, err := crypt.DeriveKey(signing, purpose)
	if err != nil {
		return nil, err
	}
	return crypt.New(key)
}

func now() time.Time { return time.Now().UTC() }

// newID returns a time-ordered UUID v7.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// ensureStreams creates or updates the named streams of the event catalogue, the ones this
// service publishes into, under the retention limits and replicas of the NATS configuration.
func ensureStreams(ctx context.Context, bus *natsx.Bus, names ...string) error {
	for _, s := range events.Streams() {
		if slices.Contains(names, s.Name) {
			if err := bus.EnsureStream(ctx, bus.StreamSpec(s.Name, s.Subjects, s.Jobs)); err != nil {
				return err
			}
		}
	}
	return nil
}
