// Package app is content-svc's composition root: it wires configuration, infrastructure,
// domain services and the HTTP adapter, and runs them.
package app

import (
	"context"
	"log/slog"

	"github.com/motionstudio/platform/pkg/blob"
	"github.com/motionstudio/platform/pkg/core"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/service"
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

// App is a running content service: its core (pkg/core) and the workers it adds, the catalog
// cache's listener and indexer, the upload sweeper, the SVG preview worker and its requeuer.
type App struct{ *core.Core }

// Migrate applies the outbox's and the service's migrations.
func Migrate(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	return core.Migrate(ctx, cfg.DB, log, store.Migrations)
}

// New connects to every dependency and builds the service. The caller must Close it.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (_ *App, err error) {
	var (
		objects  *blob.Store
		listings *cache.Catalog
	)
	c, err := core.Open(ctx, core.Options{
		Service: Name, HTTP: cfg.HTTP, DB: cfg.DB, NATS: cfg.NATS, Streams: []string{events.StreamContentEvents, events.StreamJobs},
		OpenAPI: api.OpenAPI, ErrorStyle: httpx.ProblemJSON, LargeBody: httpapi.LargeBody, JobQueue: store.PreviewQueueQuery,
		Auth: &cfg.Auth,
		Checks: []httpx.Check{
			{Name: "minio", Fn: func(ctx context.Context) error { return objects.Ping(ctx) }},
			// Ready means indexed: listings are answered by the index alone (set below).
			{Name: "catalog", Fn: func(ctx context.Context) error { return listings.Ready(ctx) }},
		},
	}, log)
	if err != nil {
		return nil, err
	}
	a := &App{Core: c}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if objects, err = blob.New(cfg.Blob); err != nil {
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
	// Catalog listings are answered by each process's listing index, kept change by change.
	catalogStore := store.NewCatalog(a.DB)
	listings, err = cache.NewCatalog(catalogStore, catalogStore, cache.Options{
		MaxTemplates: cfg.Catalog.IndexMaxTemplates, Poll: cfg.Catalog.IndexPoll}, log, a.Server.Registry)
	if err != nil {
		return nil, err
	}
	listener, err := cache.NewListener(listings, cfg.DB.DSN, log, a.Server.Registry)
	if err != nil {
		return nil, err
	}
	a.Workers = append(a.Workers, listener, listings)
	catalogHandler := catalogapi.NewHandler(
		catalog.NewService(listings, listings, service.Now, service.NewID),
		editor.NewService(store.NewEditor(a.DB), service.Now, service.NewID), favorite.NewService(store.NewFavorites(a.DB), service.Now, service.NewID),
		store.NewAEPLinks(objects, cfg.Uploads.DownloadTTL))
	if err = httpx.Mount(a.Server.Echo, api.OpenAPI,
		httpx.Area{Policies: httpapi.Policies(a.Verifier), Mount: a.filesHandler(cfg, log, objects, listings).Mount},
		httpx.Area{Policies: catalogapi.Policies(a.Verifier), Mount: catalogHandler.Mount},
	); err != nil {
		return nil, err
	}
	return a, nil
}
