// Package app is identity-svc's composition root: it wires configuration, infrastructure,
// domain services and the HTTP adapter, and runs them.
package app

import (
	"context"
	"crypto/ed25519"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/core"
	"github.com/motionstudio/platform/pkg/crypt"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/pkg/service"
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

// App is a running identity service: its core (pkg/core) and what it adds.
type App struct {
	*core.Core
	log *slog.Logger
	rdb *redis.Client
	// heldAccounts are the users refreshes read, kept in memory while its listener listens;
	// every store that writes users or tenants tells it.
	heldAccounts *cache.Accounts
	// keys are the signing keys, reread from the database by a worker while Run runs.
	keys *token.Ring
}

// Migrate applies the outbox's and the service's migrations.
func Migrate(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	return core.Migrate(ctx, cfg.DB, log, store.Migrations)
}

// New connects to every dependency and builds the service. The caller must Close it. Besides
// the core's, its workers are the accounts cache's listener, the signing keys' reloader, the
// password-reset worker and the account (accounts.go) and billing (billing.go) consumers and
// sweepers.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (_ *App, err error) {
	a := &App{log: log}
	a.Core, err = core.Open(ctx, core.Options{
		Service: Name, HTTP: cfg.HTTP, DB: cfg.DB, NATS: cfg.NATS, Streams: []string{events.StreamIdentityEvents, events.StreamJobs},
		OpenAPI: api.OpenAPI, ErrorStyle: httpx.ProblemJSON, JobQueue: store.WebhookQueueQuery + " UNION ALL " + store.ResetQueueQuery,
		Checks: []httpx.Check{{Name: "redis", Fn: func(ctx context.Context) error { return redisx.Ping(ctx, a.rdb) }}},
	}, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.rdb, err = redisx.Connect(ctx, cfg.Redis); err != nil {
		return nil, err
	}
	a.Closers.Add(func() { _ = a.rdb.Close() })
	key, err := signingKey(cfg)
	if err != nil {
		return nil, err
	}
	if a.keys, err = newRing(ctx, a.DB, cfg, key); err != nil {
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
	listener, err := cache.NewListener(a.heldAccounts, cfg.DB.DSN, log, a.Server.Registry)
	if err != nil {
		return nil, err
	}
	a.Workers = append(a.Workers, listener,
		service.WorkerFunc(func(ctx context.Context) error { return runRing(ctx, a.keys, cfg, log) }))
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
	if err = httpx.Mount(a.Server.Echo, api.OpenAPI, areas...); err != nil {
		return nil, err
	}
	return a, nil
}

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
