// Package bus connects content-svc's domain to the event bus: it consumes the SVG preview
// jobs and hands each to the preview service.
package bus

import (
	"context"

	"github.com/motionstudio/platform/pkg/natsx"
	events "github.com/motionstudio/platform/proto-events"
	contentv1 "github.com/motionstudio/platform/proto-events/gen/content/v1"
)

// PreviewProcessor generates one SVG preview.
type PreviewProcessor interface {
	Process(ctx context.Context, id string) error
}

// RunPreviewWorker consumes jobs.content.svg_preview.generate with the durable
// content_svg_preview_worker until ctx is done, running up to concurrency previews at once
// (natsx.ConsumeJobs).
func RunPreviewWorker(ctx context.Context, b *natsx.Bus, p PreviewProcessor, concurrency int) error {
	c := natsx.JobConsumer{Durable: events.DurableSvgPreviewWorker, Queue: "svg_preview.generate", Concurrency: concurrency}
	return natsx.ConsumeJobs(ctx, b, c, (*contentv1.SvgPreviewJob).GetPreviewId, p.Process)
}
