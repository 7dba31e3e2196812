// Package bus connects agentteam-svc's domain to the event bus: it consumes the agent-run job
// wake-ups and hands each run to the worker.
package bus

import (
	"context"

	"github.com/motionstudio/platform/pkg/natsx"
	events "github.com/motionstudio/platform/proto-events"
	agentteamv1 "github.com/motionstudio/platform/proto-events/gen/agentteam/v1"
)

// RunProcessor executes one agent run.
type RunProcessor interface {
	Process(ctx context.Context, runID string) error
}

// RunAgentRunWorker consumes jobs.agentteam.agent.run with the durable
// agentteam_agent_run_worker until ctx is done, running up to concurrency runs at once
// (natsx.ConsumeJobs).
func RunAgentRunWorker(ctx context.Context, b *natsx.Bus, p RunProcessor, concurrency int) error {
	c := natsx.JobConsumer{Durable: events.DurableAgentRunWorker, Queue: "agent.run", Concurrency: concurrency}
	return natsx.ConsumeJobs(ctx, b, c, (*agentteamv1.AgentRunJob).GetRunId, p.Process)
}
