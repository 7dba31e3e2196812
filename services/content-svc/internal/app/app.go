// Package app is content-svc's composition root: it wires configuration, infrastructure,
// domain services and the HTTP adapter, and runs them.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/blob"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/revocation"
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
	// workers are the background loops Run starts beside the server (upload sweeper, SVG
	// preview worker, session revocations, the catalog cache's listener).
	workers []func(ctx context.Context) error
	log     *slog.Logger
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
	if a.bus, err = natsx.Connect(ctx, cfg.NATS, Name, log); err != nil {
		return nil, err
	}
	if err = ensureStreams(ctx, a.bus, events.StreamContentEvents, events.StreamJobs); err != nil {
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
	a.workers = append(a.workers, func(ctx context.Context) error { return revoked.Follow(ctx, a.bus, log, 0) })
	asyncDoc, ok := events.AsyncAPI(events.ServiceContent)
	if !ok {
		return nil, fmt.Errorf("app: no AsyncAPI document for %s", Name)
	}
	a.server, err = httpx.New(httpx.Options{
		Service: Name, Config: cfg.HTTP, Logger: log, ErrorStyle: httpx.ProblemJSON, OpenAPI: api.OpenAPI, AsyncAPI: asyncDoc,
		LargeBody: httpapi.LargeBody,
		Checks: []httpx.Check{
			{Name: "postgres", Fn: func(ctx context.Context) error { return pgdb.Ping(ctx, a.db) }},
			{Name: "nats", Fn: a.bus.Ping},
			{Name: "minio", Fn: objects.Ping},
		},
	})
	if err != nil {
		return nil, err
	}
	dbStats, err := pgdb.NewStatsCollector(ctx, a.db)
	if err != nil {
		return nil, err
	}
	err = a.server.Register(dbStats, outbox.NewLagCollector(a.db), a.bus.ConsumerCollector(), pgdb.NewJobQueueCollector(a.db, store.PreviewQueueQuery))
	if err != nil {
		return nil, err
	}
	policies, err := httpx.Merge(httpapi.Policies(verifier), catalogapi.Policies(verifier))
	if err != nil {
		return nil, err
	}
	if err = policies.Verify(api.OpenAPI); err != nil {
		return nil, err
	}
	// Catalog pages and totals are answered from memory while the listener listens.
	catalogStore := store.NewCatalog(a.db)
	listings := cache.NewCatalog(catalogStore, cfg.Catalog.CacheBytes)
	listener, err := cache.NewListener(listings, cfg.DB.DSN, log, a.server.Registry)
	if err != nil {
		return nil, err
	}
	indexer, err := cache.NewIndexer(listings, catalogStore, cache.IndexOptions{
		MaxTemplates: cfg.Catalog.IndexMaxTemplates, Cards: cfg.Catalog.IndexCards, Every: cfg.Catalog.IndexEvery}, log, a.server.Registry)
	if err != nil {
		return nil, err
	}
	a.workers = append(a.workers, listener.Run, indexer.Run)
	httpapi.Register(a.server.Echo, a.filesHandler(cfg, log, objects, listings), policies)
	catalogapi.Register(a.server.Echo, catalogapi.NewHandler(
		catalog.NewService(listings, newID),
		editor.NewService(store.NewEditor(a.db), newID), favorite.NewService(store.NewFavorites(a.db), newID),
		store.NewAEPLinks(objects, cfg.Uploads.DownloadTTL)), policies)
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
	return a.relay.Beside(ctx, func(ctx context.Context) error {
		g, ctx := errgroup.WithContext(ctx)
		g.Go(func() error { return a.server.Run(ctx) })
		for _, w := range a.workers {
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
	if a.db != nil {
		_ = pgdb.Close(a.db)
	}
	if a.stopTracing != nil {
		telemetry.Stop(a.stopTracing, a.log)
	}
}

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

// newID makes record ids: UUID v7, time ordered.
func newID() string { return uuid.Must(uuid.NewV7()).String() }
