package app

import (
	"context"
	"log/slog"

	"github.com/motionstudio/platform/pkg/blob"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/service"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/content-svc/internal/bus"
	"github.com/motionstudio/platform/services/content-svc/internal/cache"
	"github.com/motionstudio/platform/services/content-svc/internal/config"
	"github.com/motionstudio/platform/services/content-svc/internal/httpapi"
	"github.com/motionstudio/platform/services/content-svc/internal/media"
	"github.com/motionstudio/platform/services/content-svc/internal/outbound/previewai"
	"github.com/motionstudio/platform/services/content-svc/internal/preview"
	"github.com/motionstudio/platform/services/content-svc/internal/render"
	"github.com/motionstudio/platform/services/content-svc/internal/site"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
	"github.com/motionstudio/platform/services/content-svc/internal/upload"
)

// filesHandler builds the files-and-site HTTP handler with its domain services, and adds
// their background loops (the AEP upload sweeper, the SVG preview worker and its requeuer)
// to the app's workers.
func (a *App) filesHandler(cfg config.Config, log *slog.Logger, objects *blob.Store, listings *cache.Catalog) *httpapi.Handler {
	uploads := upload.NewService(upload.Config{
		MaxSingleBytes: cfg.Uploads.MaxSingleBytes, MinMultipartBytes: cfg.Uploads.MinMultipartBytes,
		MaxMultipartBytes: cfg.Uploads.MaxMultipartBytes, PartSizeBytes: cfg.Uploads.PartSizeBytes,
		URLTTL: cfg.Uploads.URLTTL, MaxAge: cfg.Uploads.MaxAge,
	}, store.NewUploads(a.DB), store.NewUploadObjects(objects), service.Now)

	var generator preview.PreviewGenerator = preview.NewBuiltin()
	if cfg.Previews.AIURL != "" {
		generator = previewai.New(cfg.Previews.AIURL, cfg.Previews.AIToken, cfg.Previews.AITimeout)
	}
	previews := preview.NewService(preview.Config{
		MaxImageBytes: cfg.Previews.MaxImageBytes, MaxImagePixels: cfg.Previews.MaxImagePixels, Lease: cfg.Previews.Lease,
		MaxAttempts: cfg.Previews.MaxAttempts, StaleAfter: cfg.Previews.StaleAfter,
	}, store.NewPreviews(a.DB, outbox.NewWriter(events.SourceContent)), store.NewPreviewObjects(objects), generator)

	a.Workers = append(a.Workers,
		service.WorkerFunc(func(ctx context.Context) error { return uploads.RunSweeper(ctx, cfg.Uploads.SweepEvery, log) }),
		service.WorkerFunc(func(ctx context.Context) error {
			return bus.RunPreviewWorker(ctx, a.Bus, previews, cfg.Previews.Concurrency)
		}),
		service.WorkerFunc(func(ctx context.Context) error { return previews.RunRequeuer(ctx, cfg.Previews.RequeueEvery, log) }),
	)
	return httpapi.NewHandler(httpapi.Deps{
		Render:    render.NewService(store.NewRenderServers(a.DB)),
		Media:     media.NewService(store.NewMedia(a.DB), store.NewObjects(objects)),
		Site:      site.NewService(cache.Ratings{Store: store.NewSite(a.DB), Catalog: listings}, service.Now, service.NewID),
		Uploads:   uploads,
		Previews:  previews,
		ObjectURL: objects.PublicURL,
		AEP:       store.NewAEPLinks(objects, cfg.Uploads.DownloadTTL),
	})
}
