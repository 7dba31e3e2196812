package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// MemoryEntries is how many team memory entries a prompt carries (the spec's top 3).
const MemoryEntries = 3

// attempt assembles the prompt and asks the model; a reason to fail the run is returned as a
// Failed run, not an error.
func (w *Worker) attempt(ctx context.Context, r *run.Run) (run.Run, error) {
	out := *r
	fail := func(code, msg string) (run.Run, error) {
		out.Status, out.ErrorCode, out.Error = run.Failed, code, msg
		return out, nil
	}
	agent, err := w.agent(ctx, r)
	if apperr.Is(err, apperr.NotFound) {
		return fail(CodeNoAgent, "The seat has no agent configured.")
	}
	if err != nil {
		return out, err
	}
	out.AgentID = &agent.ID
	if agent.MonthlyTokenBudget != nil {
		used, err := w.store.TokensUsed(ctx, agent.ID, monthStart(w.now()))
		if err != nil {
			return out, err
		}
		if used >= *agent.MonthlyTokenBudget {
			return fail(CodeBudgetExceeded, fmt.Sprintf("The agent used %d of its %d tokens this month; the run was not sent to the model.", used, *agent.MonthlyTokenBudget))
		}
	}
	conns, err := w.openConnections(ctx, agent)
	if err != nil {
		return out, err
	}
	if len(conns) == 0 {
		return fail(CodeNoConnection, "The agent's model connection (and fallback) does not exist; configure the agent with an existing connection.")
	}
	task, err := w.store.Task(ctx, r.WorkItemID)
	if err != nil {
		return out, err
	}
	p := w.assemble(ctx, r, agent, task)
	out.Prompt, out.SkippedMCPServers = p.Text(), p.Skipped
	ans, err := w.complete(ctx, conns, p.Messages())
	if err != nil {
		if ctx.Err() != nil {
			return out, err
		}
		return fail(codeOf(err, "model_failed"), reasonOf(err))
	}
	out.Status, out.Output, out.ConnectionID = run.Completed, ans.Text, &ans.ConnectionID
	out.PromptTokens, out.CompletionTokens = ans.Usage.PromptTokens, ans.Usage.CompletionTokens
	out.Error, out.ErrorCode = "", ""
	return out, nil
}

// agent loads the run's agent, or the seat's current one when the run names none.
func (w *Worker) agent(ctx context.Context, r *run.Run) (Agent, error) {
	id := ""
	if r.AgentID != nil {
		id = *r.AgentID
	} else {
		var err error
		if id, err = w.store.SeatAgent(ctx, r.SeatID); err != nil {
			return Agent{}, err
		}
	}
	return w.store.Agent(ctx, id)
}

// openConnections opens the primary and the fallback connection; a missing or unusable one is
// left out (and logged), so the run falls back or fails with no_connection.
func (w *Worker) openConnections(ctx context.Context, a Agent) ([]connection.OpenedModel, error) {
	ids := []string{a.APIConfigID}
	if a.FallbackAPIConfigID != nil && *a.FallbackAPIConfigID != "" && *a.FallbackAPIConfigID != a.APIConfigID {
		ids = append(ids, *a.FallbackAPIConfigID)
	}
	var out []connection.OpenedModel
	for _, id := range ids {
		c, err := w.conns.OpenModel(ctx, a.OrganizationID, id)
		switch {
		case err == nil:
			out = append(out, c)
		case apperr.Is(err, apperr.NotFound) || apperr.Is(err, apperr.Internal) && codeOf(err, "") == "connection_unusable":
			w.log.WarnContext(ctx, "model connection unusable", "agent_id", a.ID, "connection_id", id, "reason", reasonOf(err))
		default:
			return nil, err
		}
	}
	return out, nil
}

// monthStart is the first instant of now's calendar month in UTC.
func monthStart(now time.Time) time.Time {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
}
