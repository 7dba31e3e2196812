// Package bus connects content-svc's domain to the event bus: it consumes the SVG preview
// jobs and hands each to the preview service.
package bus

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/telemetry"
	events "github.com/motionstudio/platform/proto-events"
	contentv1 "github.com/motionstudio/platform/proto-events/gen/content/v1"
)

// PreviewProcessor generates one SVG preview.
type PreviewProcessor interface {
	Process(ctx context.Context, id string) error
}

// RunPreviewWorker consumes jobs.content.svg_preview.generate with the durable
// content_svg_preview_worker until ctx is done, running up to concurrency previews at once.
// A job whose payload names no preview is dead-lettered, and one whose preview another worker
// holds comes back when that worker's lease ends. It returns natsx.Consume's errors.
func RunPreviewWorker(ctx context.Context, b *natsx.Bus, p PreviewProcessor, concurrency int) error {
	spec := natsx.ConsumerSpec{
		Stream: events.StreamJobs, Durable: events.DurableSvgPreviewWorker,
		FilterSubjects: []string{events.SubjectSvgPreviewJob}, Concurrency: concurrency,
	}
	return b.Consume(ctx, spec, func(ctx context.Context, m natsx.Message) error {
		var job contentv1.SvgPreviewJob
		if err := m.Decode(&job); err != nil {
			return natsx.Permanent(fmt.Errorf("bus: decode svg preview job: %w", err))
		}
		if _, err := uuid.Parse(job.GetPreviewId()); err != nil {
			return natsx.Permanent(fmt.Errorf("bus: svg preview job without a preview id: %w", err))
		}
		return telemetry.Job(ctx, "svg_preview.generate", job.GetPreviewId(), func(ctx context.Context) error {
			return p.Process(ctx, job.GetPreviewId())
		})
	})
}
