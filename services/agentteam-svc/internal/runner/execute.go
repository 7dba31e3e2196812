package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// MemoryEntries is how many team memory entries a prompt carries (the spec's top 3).
const MemoryEntries = 3

// attempt assembles the prompt and runs the tool loop from the run's transcript; a reason to
// fail the run is returned as a Failed run, not an error, and a run that waits for a person is
// returned parked (AwaitingApproval).
func (w *Worker) attempt(ctx context.Context, l jobs.Lease, r *run.Run) (run.Run, error) {
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
	return w.loop(ctx, turn{lease: l, prompt: p, autonomy: agent.Autonomy}, out, conns)
}

// turn is what one attempt's tool loop works with: the lease its writes are fenced by, the
// prompt (with the tools offered) and the agent's autonomy.
type turn struct {
	lease    jobs.Lease
	prompt   prompt
	autonomy string
}

// loop rebuilds the conversation from the run's transcript, settles the tool calls of the last
// model answer, then asks the model, makes the tool calls it asks for and feeds their results
// back, until it answers without tool calls (the run's output), a call waits for a person (the
// run is parked AwaitingApproval) or a limit of the run is reached. The limits count the
// recorded steps, so a resumed run does not get fresh budgets.
func (w *Worker) loop(ctx context.Context, t turn, out run.Run, conns []connection.OpenedModel) (run.Run, error) {
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
	tr, err := w.transcript(ctx, out.ID, t.prompt)
	if err != nil {
		return out, err
	}
	for {
		out.PromptTokens, out.CompletionTokens = tr.promptTokens, tr.completionTokens
		if tr.connectionID != nil {
			out.ConnectionID = tr.connectionID
		}
		if tr.final != nil {
			out.Status, out.Output, out.Error, out.ErrorCode = run.Completed, *tr.final, "", ""
			return out, nil
		}
		waiting := false
		for i := range tr.pending {
			pc := &tr.pending[i]
			if pc.step == nil {
				if tr.calls >= lim.ToolCalls {
					return fail(CodeToolCallLimit, fmt.Sprintf("The run reached its limit of %d tool calls.", lim.ToolCalls))
				}
				tr.calls++
			}
			step, err := w.settle(ctx, t, out.ID, pc.call, pc.step)
			switch {
			case errors.Is(context.Cause(ctx), errTimeLimit):
				return timeLimit()
			case err != nil:
				return out, err
			}
			pc.step = &step
			if step.Status == run.CallAwaitingApproval {
				waiting = true
				continue
			}
			tr.messages = append(tr.messages, toolResult(t.prompt.fence, step))
		}
		if waiting {
			out.Status = run.AwaitingApproval
			err := w.store.Park(context.WithoutCancel(ctx), t.lease, out)
			if !errors.Is(err, ErrNoneWaiting) {
				return out, err
			}
			// Every waiting call was decided before the run could be parked: carry on with
			// the decisions as recorded.
			if tr, err = w.transcript(ctx, out.ID, t.prompt); err != nil {
				return out, err
			}
			continue
		}
		tr.pending = nil
		switch {
		case tr.models >= lim.Steps:
			return fail(CodeStepLimit, fmt.Sprintf("The run reached its limit of %d model calls.", lim.Steps))
		case tr.promptTokens+tr.completionTokens >= lim.Tokens:
			return fail(CodeTokenLimit, fmt.Sprintf("The run reached its limit of %d tokens.", lim.Tokens))
		}
		began := w.now()
		ans, err := w.complete(ctx, conns, tr.messages, t.prompt.tools.specs)
		step := run.Step{RunID: out.ID, Kind: run.ModelStep, Duration: w.now().Sub(began), Status: run.CallSucceeded}
		if err != nil {
			step.Status, step.Result = run.CallFailed, reasonOf(err)
		} else {
			step.ConnectionID, step.AskedForTools = &ans.ConnectionID, len(ans.ToolCalls) > 0
			step.PromptTokens, step.CompletionTokens = ans.Usage.PromptTokens, ans.Usage.CompletionTokens
			step.Answer = &run.Answer{Text: ans.Text, ToolCalls: ans.ToolCalls}
		}
		if _, err := w.store.AddStep(context.WithoutCancel(ctx), t.lease, step); err != nil {
			return out, err
		}
		tr.model(step)
		if err != nil {
			switch {
			case errors.Is(context.Cause(ctx), errTimeLimit):
				return timeLimit()
			case ctx.Err() != nil:
				return out, err
			}
			return fail(codeOf(err, "model_failed"), reasonOf(err))
		}
	}
}

// settle brings one tool call of the last model answer to a recorded result, or leaves it
// waiting for a person, and returns its step as recorded. A call without a step is checked
// (its function, its arguments, the agent's autonomy) and made or recorded AwaitingApproval; an
// Approved call is made; a call left Running by a worker that died is sent again only when its
// risk is Low, otherwise it becomes Unknown; a call with a result is left as it is, never sent
// again. A call is recorded Running before it is sent.
func (w *Worker) settle(ctx context.Context, t turn, runID string, c ToolCall, recorded *run.Step) (run.Step, error) {
	if recorded != nil && (run.Answered(recorded.Status) || recorded.Status == run.CallAwaitingApproval) {
		return *recorded, nil
	}
	step := run.Step{RunID: runID, Kind: run.ToolStep, CallID: c.ID, FunctionName: oneLine(c.Name), Arguments: c.Arguments, Status: run.CallFailed}
	if recorded != nil {
		step = *recorded
	}
	bound, ok := t.prompt.tools.byName[c.Name]
	if ok {
		step.MCPServerID, step.ToolName = &bound.Endpoint.ID, bound.Tool.Name
		if recorded == nil {
			step.Risk = string(bound.Tool.Risk)
		}
	}
	args, argErr := arguments(c.Arguments)
	switch {
	case !ok:
		step.Status, step.Result = run.CallFailed, "There is no tool with this name."
		return step, w.record(ctx, t.lease, &step, recorded == nil)
	case argErr != nil:
		step.Status, step.Result = run.CallFailed, "The call was not made: "+argErr.Error()+"."
		return step, w.record(ctx, t.lease, &step, recorded == nil)
	case recorded == nil && !MayCall(t.autonomy, bound.Tool.Risk):
		step.Status = run.CallAwaitingApproval
		return step, w.record(ctx, t.lease, &step, true)
	case recorded != nil && recorded.Status == run.CallRunning && step.Risk != string(connection.RiskLow):
		step.Status, step.Result = run.CallUnknown, fmt.Sprintf(
			"The outcome of this call is unknown: it was sent, but the worker making it stopped before its result was recorded, and a %s-risk call is not sent twice. Check its effect before calling it again.",
			step.Risk)
		return step, w.record(ctx, t.lease, &step, false)
	}
	if recorded == nil || recorded.Status == run.CallApproved {
		step.Status, step.Result = run.CallRunning, ""
		if err := w.record(ctx, t.lease, &step, recorded == nil); err != nil {
			return step, err
		}
	}
	began := w.now()
	text, err := w.tools.CallTool(ctx, bound.Endpoint, bound.Tool.Name, args)
	step.Duration = w.now().Sub(began)
	switch {
	case err == nil:
		step.Status, step.Result = run.CallSucceeded, capped(text, w.cfg.Limits.ResultBytes)
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), errTimeLimit):
		// The worker is stopping or lost the run: the step stays Running for the attempt
		// that resumes it to settle.
		return step, ctx.Err()
	default:
		w.log.InfoContext(ctx, "tool call failed", "mcp_server_id", bound.Endpoint.ID, "tool", bound.Tool.Name, "reason", connection.Reason(err))
		step.Status, step.Result = run.CallFailed, capped(connection.Reason(err), w.cfg.Limits.ResultBytes)
	}
	return step, w.record(ctx, t.lease, &step, false)
}

// record appends the step to the transcript (add, which sets its Seq) or updates its recorded
// state, while the lease holds.
func (w *Worker) record(ctx context.Context, l jobs.Lease, step *run.Step, add bool) error {
	ctx = context.WithoutCancel(ctx)
	if !add {
		return w.store.UpdateStep(ctx, l, *step)
	}
	seq, err := w.store.AddStep(ctx, l, *step)
	step.Seq = seq
	return err
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
