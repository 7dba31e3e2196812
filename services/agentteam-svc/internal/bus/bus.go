// Package bus connects agentteam-svc's domain to the event bus: it consumes the agent-run job
// wake-ups and hands each run to the worker.
package bus

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/telemetry"
	events "github.com/motionstudio/platform/proto-events"
	agentteamv1 "github.com/motionstudio/platform/proto-events/gen/agentteam/v1"
)

// RunProcessor executes one agent run.
type RunProcessor interface {
	Process(ctx context.Context, runID string) error
}

// RunAgentRunWorker consumes jobs.agentteam.agent.run with the durable
// agentteam_agent_run_worker until ctx is done, running up to concurrency runs at once; every
// replica shares the durable, so each wake-up reaches one of them. A run leased by another
// worker comes back when that lease ends (jobs.HeldError); a wake-up that names no run is dead-lettered. It
// returns natsx.Consume's errors.
func RunAgentRunWorker(ctx context.Context, b *natsx.Bus, p RunProcessor, concurrency int) error {
	spec := natsx.ConsumerSpec{
		Stream: events.StreamJobs, Durable: events.DurableAgentRunWorker,
		FilterSubjects: []string{events.SubjectAgentRunJob}, Concurrency: concurrency,
	}
	return b.Consume(ctx, spec, func(ctx context.Context, m natsx.Message) error {
		var job agentteamv1.AgentRunJob
		if err := m.Decode(&job); err != nil {
			return natsx.Permanent(fmt.Errorf("bus: decode agent run job: %w", err))
		}
		if _, err := uuid.Parse(job.GetRunId()); err != nil {
			return natsx.Permanent(fmt.Errorf("bus: agent run job without a run id: %w", err))
		}
		return telemetry.Job(ctx, "agent.run", job.GetRunId(), func(ctx context.Context) error {
			return p.Process(ctx, job.GetRunId())
		})
	})
}
