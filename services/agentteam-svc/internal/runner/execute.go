package runner

import (
	"context"
	"errors"
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
	return w.loop(ctx, out, conns, p, agent.Autonomy)
}

// loop asks the model, makes the tool calls it asks for and feeds their results back, until it
// answers without tool calls (the run's output) or a limit of the run is reached.
func (w *Worker) loop(ctx context.Context, out run.Run, conns []connection.OpenedModel, p prompt, autonomy string) (run.Run, error) {
	lim := w.cfg.Limits
	ctx, cancel := context.WithTimeoutCause(ctx, lim.Duration, errTimeLimit)
	defer cancel()
	fail := func(code, msg string) (run.Run, error) {
		out.Status, out.ErrorCode, out.Error = run.Failed, code, msg
		return out, nil
	}
	timeLimit := func() (run.Run, error) {
		return fail(CodeTimeLimit, fmt.Sprintf("The run reached its time limit of %s.", lim.Duration))
	}
	messages, steps, calls := p.Messages(), 0, 0
	for {
		switch {
		case steps >= lim.Steps:
			return fail(CodeStepLimit, fmt.Sprintf("The run reached its limit of %d model calls.", lim.Steps))
		case out.PromptTokens+out.CompletionTokens >= lim.Tokens:
			return fail(CodeTokenLimit, fmt.Sprintf("The run reached its limit of %d tokens.", lim.Tokens))
		}
		began := w.now()
		ans, err := w.complete(ctx, conns, messages, p.tools.specs)
		steps++
		step := run.Step{RunID: out.ID, Kind: run.ModelStep, Duration: w.now().Sub(began), Status: run.CallSucceeded}
		if err != nil {
			step.Status, step.Result = run.CallFailed, reasonOf(err)
		} else {
			step.ConnectionID, step.AskedForTools = &ans.ConnectionID, len(ans.ToolCalls) > 0
			step.PromptTokens, step.CompletionTokens = ans.Usage.PromptTokens, ans.Usage.CompletionTokens
		}
		if err := w.store.AddStep(context.WithoutCancel(ctx), step); err != nil {
			return out, err
		}
		if err != nil {
			switch {
			case errors.Is(context.Cause(ctx), errTimeLimit):
				return timeLimit()
			case ctx.Err() != nil:
				return out, err
			}
			return fail(codeOf(err, "model_failed"), reasonOf(err))
		}
		out.ConnectionID = &ans.ConnectionID
		out.PromptTokens += ans.Usage.PromptTokens
		out.CompletionTokens += ans.Usage.CompletionTokens
		if len(ans.ToolCalls) == 0 {
			out.Status, out.Output, out.Error, out.ErrorCode = run.Completed, ans.Text, "", ""
			return out, nil
		}
		messages = append(messages, Message{Role: Assistant, Content: ans.Text, ToolCalls: ans.ToolCalls})
		for _, call := range ans.ToolCalls {
			if calls >= lim.ToolCalls {
				return fail(CodeToolCallLimit, fmt.Sprintf("The run reached its limit of %d tool calls.", lim.ToolCalls))
			}
			calls++
			began := w.now()
			step := w.call(ctx, p, autonomy, call)
			step.RunID, step.Duration = out.ID, w.now().Sub(began)
			if err := w.store.AddStep(context.WithoutCancel(ctx), step); err != nil {
				return out, err
			}
			messages = append(messages, Message{Role: ToolRole, ToolCallID: call.ID, Content: toolMessage(p.fence, step.FunctionName, step.Status, step.Result)})
			if errors.Is(context.Cause(ctx), errTimeLimit) {
				return timeLimit()
			}
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
		}
	}
}

// call makes one tool call the model asked for and returns its step: the result, or why the
// call failed (an unknown function, arguments that are not an object, a server that fails or
// reports an error) or was Rejected (the agent's autonomy does not cover its risk: the call
// needs a person, and asking one is not offered yet), capped as the model reads it.
func (w *Worker) call(ctx context.Context, p prompt, autonomy string, c ToolCall) run.Step {
	step := run.Step{Kind: run.ToolStep, CallID: c.ID, FunctionName: oneLine(c.Name), Arguments: c.Arguments, Status: run.CallFailed}
	bound, ok := p.tools.byName[c.Name]
	if !ok {
		step.Result = "There is no tool with this name."
		return step
	}
	step.MCPServerID, step.ToolName, step.Risk = &bound.Endpoint.ID, bound.Tool.Name, string(bound.Tool.Risk)
	if !MayCall(autonomy, bound.Tool.Risk) {
		step.Status, step.Result = run.CallRejected, fmt.Sprintf(
			"The call was not made: its risk is %s and the agent's autonomy does not let it make such calls without a person's approval. Continue without it, or describe the call you would make in your answer.",
			bound.Tool.Risk)
		return step
	}
	args, err := arguments(c.Arguments)
	if err != nil {
		step.Result = "The call was not made: " + err.Error() + "."
		return step
	}
	text, err := w.tools.CallTool(ctx, bound.Endpoint, bound.Tool.Name, args)
	if err != nil {
		w.log.InfoContext(ctx, "tool call failed", "mcp_server_id", bound.Endpoint.ID, "tool", bound.Tool.Name, "reason", connection.Reason(err))
		step.Result = capped(connection.Reason(err), w.cfg.Limits.ResultBytes)
		return step
	}
	step.Status, step.Result = run.CallSucceeded, capped(text, w.cfg.Limits.ResultBytes)
	return step
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
