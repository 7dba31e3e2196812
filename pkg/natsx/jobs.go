package natsx

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/motionstudio/platform/pkg/telemetry"
	events "github.com/motionstudio/platform/proto-events"
)

// JobConsumer names one kind of job wake-up: the catalogue's durable that consumes it, the
// queue name its spans carry, and how many jobs one process runs at once.
type JobConsumer struct {
	Durable     string
	Queue       string
	Concurrency int
	// AckWait is how long the server waits for an acknowledgement (0: the Consume default).
	AckWait time.Duration
}

// ConsumeJobs consumes the wake-ups of one job kind until ctx is done. Every replica shares
// the durable, so each wake-up reaches one of them. A wake-up decodes into a fresh J whose id
// (read by id) must be a UUID: one that does not decode or names no job is dead-lettered.
// process runs under a job span (telemetry.Job); a job another worker holds comes back when
// that worker's lease ends (process returns a jobs.HeldError). It returns Consume's errors.
func ConsumeJobs[J any, PJ interface {
	*J
	proto.Message
}](ctx context.Context, b *Bus, c JobConsumer, id func(PJ) string, process func(ctx context.Context, id string) error) error {
	entry, ok := events.Durable(c.Durable)
	if !ok {
		return fmt.Errorf("natsx: %s is not in the consumer catalogue", c.Durable)
	}
	spec := ConsumerSpec{
		Stream: entry.Stream, Durable: entry.Name, FilterSubjects: []string{entry.Filter},
		Concurrency: c.Concurrency, AckWait: c.AckWait,
	}
	return b.Consume(ctx, spec, func(ctx context.Context, m Message) error {
		job := PJ(new(J))
		if err := m.Decode(job); err != nil {
			return err
		}
		jobID := id(job)
		if _, err := uuid.Parse(jobID); err != nil {
			return Permanent(fmt.Errorf("natsx: %s wake-up %s names no job: %w", c.Queue, m.ID, err))
		}
		return telemetry.Job(ctx, c.Queue, jobID, func(ctx context.Context) error {
			return process(ctx, jobID)
		})
	})
}
