// Package app is content-svc's composition root: it wires configuration, infrastructure,
// domain services and the HTTP adapter, and runs them.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/blob"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/revocation"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/pkg/telemetry"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/content-svc/api"
	"github.com/motionstudio/platform/services/content-svc/internal/cache"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
	"github.com/motionstudio/platform/services/content-svc/internal/config"
	"github.com/motionstudio/platform/services/content-svc/internal/editor"
	"github.com/motionstudio/platform/services/content-svc/internal/favorite"
	"github.com/motionstudio/platform/services/content-svc/internal/httpapi"
	"github.com/motionstudio/platform/services/content-svc/internal/httpapi/catalogapi"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
)

// Name is the service name used in logs, metrics and the NATS connection.
const Name = "content-svc"

// App is a running content service.
type App struct {
	db     *gorm.DB
	bus    *natsx.Bus
	server *httpx.Server
	relay  *outbox.Relay
	// workers are what Run runs beside the relay: the HTTP server, session revocations, the
	// catalog cache's listener and indexer, the upload sweeper, the SVG preview worker and its
	// requeuer.
	workers []service.Worker
	closers service.Closers
}

// Migrate applies the outbox's and the service's migrations.
func Migrate(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	db, err := pgdb.Open(ctx, cfg.DB)
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	return pgdb.Migrate(ctx, db, log, outbox.Migrations, store.Migrations)
}

// New connects to every dependency and builds the service. The caller must Close it.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (_ *App, err error) {
	a := &App{}
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
	if a.bus, err = natsx.Connect(ctx, cfg.NATS, Name, log); err != nil {
		return nil, err
	}
	a.closers.Add(a.bus.Close)
	if err = a.bus.EnsureStreams(ctx, events.StreamContentEvents, events.StreamJobs); err != nil {
		return nil, err
	}
	objects, err := blob.New(cfg.Blob)
	if err != nil {
		return nil, err
	}
	if err = objects.EnsureBucket(ctx); err != nil {
		return nil, err
	}
	if cfg.Public.SetPolicy {
		if err = objects.AllowPublicRead(ctx, cfg.Public.Prefixes); err != nil {
			return nil, err
		}
	}
	revoked := revocation.NewDenyList()
	verifier, err := authn.NewVerifier(ctx, authn.VerifierConfig{JWKSURL: cfg.Auth.JWKSURL, Issuer: cfg.Auth.Issuer,
		Audience: cfg.Auth.Audience, RefreshInterval: cfg.Auth.JWKSRefresh, Revocations: revoked})
	if err != nil {
		return nil, err
	}
	asyncDoc, ok := events.AsyncAPI(events.ServiceContent)
	if !ok {
		return nil, fmt.Errorf("app: no AsyncAPI document for %s", Name)
	}
	var listings *cache.Catalog
	a.server, err = httpx.New(httpx.Options{
		Service: Name, Config: cfg.HTTP, Logger: log, ErrorStyle: httpx.ProblemJSON, OpenAPI: api.OpenAPI, AsyncAPI: asyncDoc,
		LargeBody: httpapi.LargeBody,
		Checks: []httpx.Check{
			{Name: "postgres", Fn: func(ctx context.Context) error { return pgdb.Ping(ctx, a.db) }},
			{Name: "nats", Fn: a.bus.Ping},
			{Name: "minio", Fn: objects.Ping},
			// Ready means indexed: listings are answered by the index alone (set below).
			{Name: "catalog", Fn: func(ctx context.Context) error { return listings.Ready(ctx) }},
		},
	})
	if err != nil {
		return nil, err
	}
	a.workers = append(a.workers, a.server, service.WorkerFunc(func(ctx context.Context) error { return revoked.Follow(ctx, a.bus, log, 0) }))
	dbStats, err := pgdb.NewStatsCollector(ctx, a.db)
	if err != nil {
		return nil, err
	}
	err = a.server.Register(dbStats, outbox.NewLagCollector(a.db), a.bus.ConsumerCollector(), pgdb.NewJobQueueCollector(a.db, store.PreviewQueueQuery))
	if err != nil {
		return nil, err
	}
	// Catalog listings are answered by each process's listing index, kept change by change.
	catalogStore := store.NewCatalog(a.db)
	listings, err = cache.NewCatalog(catalogStore, catalogStore, cache.Options{
		MaxTemplates: cfg.Catalog.IndexMaxTemplates, Poll: cfg.Catalog.IndexPoll}, log, a.server.Registry)
	if err != nil {
		return nil, err
	}
	listener, err := cache.NewListener(listings, cfg.DB.DSN, log, a.server.Registry)
	if err != nil {
		return nil, err
	}
	a.workers = append(a.workers, listener, listings)
	catalogHandler := catalogapi.NewHandler(
		catalog.NewService(listings, listings, service.Now, service.NewID),
		editor.NewService(store.NewEditor(a.db), service.Now, service.NewID), favorite.NewService(store.NewFavorites(a.db), service.Now, service.NewID),
		store.NewAEPLinks(objects, cfg.Uploads.DownloadTTL))
	if err = httpx.Mount(a.server.Echo, api.OpenAPI,
		httpx.Area{Policies: httpapi.Policies(verifier), Mount: a.filesHandler(cfg, log, objects, listings).Mount},
		httpx.Area{Policies: catalogapi.Policies(verifier), Mount: catalogHandler.Mount},
	); err != nil {
		return nil, err
	}
	a.relay = outbox.NewRelay(a.db, a.bus, log, outbox.RelayConfig{})
	return a, nil
}

// Listen binds the HTTP address ahead of Run, so that a caller can read the port it got
// (tests listen on port 0).
func (a *App) Listen() (net.Addr, error) { return a.server.Listen() }

// Run serves HTTP, runs the workers and relays the outbox until ctx is done or one of them
// fails. On shutdown /readyz turns 503 at once and HTTP drains while the workers stop
// fetching and finish or nak what they hold; the relay then makes a last pass over what they
// wrote, and Close closes the connections.
func (a *App) Run(ctx context.Context) error {
	return a.relay.Beside(ctx, func(ctx context.Context) error { return service.RunAll(ctx, a.workers...) })
}

// Close releases what New opened, in reverse order, and flushes the spans not yet exported.
func (a *App) Close() { a.closers.Close() }
