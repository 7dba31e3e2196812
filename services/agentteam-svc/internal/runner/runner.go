// Package runner executes queued agent runs. A worker claims a run's job with a lease (run
// Running, job Processing, one more attempt), renews the lease while the model answers,
// assembles the prompt (product identity, persona, team memory, skills, MCP tool catalog, each
// framed as data, then the task), calls the agent's model connection with retries and the
// fallback connection, offering the MCP tools as functions and making the tool calls the model
// asks for until it answers (within the run's Limits), and finishes the run Completed or Failed
// (job Done or Failed) with its prompt, output, usage and reason, only while it still holds the
// lease (pkg/jobs). Every step is recorded as it happens (a tool call Running before it is
// sent), and each attempt resumes from the recorded steps. A call the agent's autonomy does not
// cover waits for a person: the run is parked AwaitingApproval (its job neither leased nor
// swept) until the calls are decided and the run is queued again. A sweeper
// requeues runs whose worker died and re-wakes runs whose wake-up was lost; the claim fails
// runs that waited or were attempted too long (a claim that follows a person's decision is not
// a retry). A cancelled run is never run or finished over.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// Error codes a failed run carries in errorCode.
const (
	CodeNoAgent           = "no_agent"
	CodeNoConnection      = "no_connection"
	CodeBudgetExceeded    = "budget_exceeded"
	CodeAttemptsExhausted = "attempts_exhausted"
	CodeQueueTimeout      = "queue_timeout"
	CodeStepLimit         = "step_limit"
	CodeToolCallLimit     = "tool_call_limit"
	CodeTimeLimit         = "time_limit"
	CodeTokenLimit        = "token_limit"
)

// ErrNoneWaiting is what Store.Park answers when every waiting call of the run was decided
// before it could be parked: the worker carries on with the decisions.
var ErrNoneWaiting = errors.New("runner: no tool call of the run is waiting for a person")

// ErrOrganizationBusy says a run's organization already has as many runs Running as it may
// (RUN_ORG_CONCURRENCY): the run stays Queued, unclaimed and with no attempt counted, its
// wake-up is dropped, and the end of one of the organization's runs wakes it again (the oldest
// waiting first), so that one organization never holds the shared workers.
var ErrOrganizationBusy = errors.New("runner: the run's organization runs as many runs as it may")

// errTimeLimit is the cause of a run's context when its time limit passes.
var errTimeLimit = errors.New("the run reached its time limit")

// Limits bound one run's tool loop; reaching one fails the run with the limit's errorCode.
type Limits struct {
	// Steps is how many model calls one run makes at most (step_limit).
	Steps int
	// ToolCalls is how many tool calls one run makes at most (tool_call_limit).
	ToolCalls int
	// Duration bounds one attempt's tool loop (time_limit).
	Duration time.Duration
	// Tokens bounds the prompt and completion tokens of one run (token_limit).
	Tokens int
	// ResultBytes caps a tool result as the model reads it.
	ResultBytes int
}

// Config tunes the worker.
type Config struct {
	Lease       time.Duration
	MaxAttempts int
	QueuedLimit time.Duration
	StaleAfter  time.Duration
	Retry       Retry
	Limits      Limits
}

// Agent is what a run needs of its agent.
type Agent struct {
	ID                  string
	OrganizationID      string
	Name                string
	RoleName            string
	Persona             string
	APIConfigID         string
	FallbackAPIConfigID *string
	SkillKeys           []string
	MCPServerIDs        []string
	MonthlyTokenBudget  *int64
	// Autonomy decides which tool calls run without a person (MayCall).
	Autonomy string
}

// Task is the work item a run acts on, with its product's identity.
type Task struct {
	Title           string
	Description     string
	Type            string
	ProductName     string
	ProductIdentity string
}

// Store persists runs and jobs for the worker.
type Store interface {
	// Claim leases the run's job to owner for length and marks the run Running with the
	// attempt; it returns the run as claimed, jobs.ErrNoWork when the run's job is finished or
	// unknown, a jobs.HeldError while another worker's lease is live and ErrOrganizationBusy
	// while the run's organization has its cap of runs leased.
	Claim(ctx context.Context, runID, owner string, length time.Duration) (run.Run, jobs.Lease, error)
	// Renew extends the lease, and Release gives it back so that a redelivery can claim the
	// run at once; both return jobs.ErrLeaseLost when l no longer holds the run's job.
	Renew(ctx context.Context, l jobs.Lease) error
	Release(ctx context.Context, l jobs.Lease) error
	// Finish records the end of r (Completed or Failed) with its job, and the event and audit
	// entry of a run that was active, in one transaction if l still holds the run's job,
	// jobs.ErrLeaseLost otherwise.
	Finish(ctx context.Context, l jobs.Lease, r run.Run) error
	// Park records r AwaitingApproval with its job parked (no lease, neither claimable nor
	// swept) if l still holds the run's job and a call of the run is still waiting for a
	// person; ErrNoneWaiting when none is, jobs.ErrLeaseLost when l no longer holds the job.
	Park(ctx context.Context, l jobs.Lease, r run.Run) error
	// AddStep appends a step to its run's transcript and returns its Seq; UpdateStep records
	// the status, result and duration of the step (RunID, Seq). Both write only while l holds
	// the run's job, and return jobs.ErrLeaseLost otherwise.
	AddStep(ctx context.Context, l jobs.Lease, s run.Step) (int, error)
	UpdateStep(ctx context.Context, l jobs.Lease, s run.Step) error
	// Steps returns the run's transcript in order.
	Steps(ctx context.Context, runID string) ([]run.Step, error)
	// Agent returns the run's agent (by id), or a NotFound error.
	Agent(ctx context.Context, agentID string) (Agent, error)
	// SeatAgent returns the id of the seat's agent, or a NotFound error.
	SeatAgent(ctx context.Context, seatID string) (string, error)
	// Task returns the work item with its product's identity (empty without a product).
	Task(ctx context.Context, workItemID string) (Task, error)
	// TokensUsed sums the prompt and completion tokens of the agent's runs created since.
	TokensUsed(ctx context.Context, agentID string, since time.Time) (int64, error)
	// Requeue gives a new wake-up to up to limit runs whose job's lease lapsed or whose job
	// waited untouched since staleBefore, and returns how many.
	Requeue(ctx context.Context, staleBefore time.Time, limit int) (int, error)
}

// Connections opens model connections and MCP servers (connection.Service).
type Connections interface {
	// OpenModel and OpenMCPServer answer NotFound for another organization's connection.
	OpenModel(ctx context.Context, organizationID, id string) (connection.OpenedModel, error)
	OpenMCPServer(ctx context.Context, organizationID, id string) (connection.Endpoint, error)
}

// Memory recalls the team's entries most relevant to a query, best first.
type Memory interface {
	Recall(ctx context.Context, teamID, query string, k int) ([]string, error)
}

// SkillBrief is a skill as a prompt lists it.
type SkillBrief struct {
	Key     string
	Name    string
	Summary string
}

// Skills resolves an organization's skills by key, the ones a run should see first.
type Skills interface {
	Skills(ctx context.Context, organizationID string, keys []string, query string) ([]SkillBrief, error)
}

// Changes tells of changes of a run's status, on any replica (runwatch.Hub).
type Changes interface {
	// Watch returns a channel woken when the run changes in one of kinds, and the function that
	// stops watching.
	Watch(runID string, kinds ...run.EventKind) (<-chan struct{}, func())
}

// Deps are what a Worker needs.
type Deps struct {
	Store       Store
	Connections Connections
	Model       Model
	Tools       Tools
	Memory      Memory
	Skills      Skills
	// Changes, when set, stops a run within a notification's delay of its cancel; without it
	// the next lease renewal does.
	Changes Changes
	Log     *slog.Logger
	Now     func() time.Time
	// Owner names this worker's leases (unique per process).
	Owner string
}

// Worker executes runs.
type Worker struct {
	cfg     Config
	store   Store
	conns   Connections
	model   Model
	tools   Tools
	memory  Memory
	skills  Skills
	changes Changes
	log     *slog.Logger
	now     func() time.Time
	owner   string
}

// NewWorker returns a Worker.
func NewWorker(cfg Config, d Deps) *Worker {
	return &Worker{
		cfg: cfg, store: d.Store, conns: d.Connections, model: d.Model, tools: d.Tools, memory: d.Memory, skills: d.Skills,
		changes: d.Changes, log: d.Log, now: d.Now, owner: d.Owner,
	}
}

// Process executes the run if it is claimable, renewing its lease meanwhile, or fails a run
// that waited or was attempted too long. It returns nil when the run is finished, was never
// this worker's, or ended here; a jobs.HeldError when another worker's lease is live; and other
// errors (the database) for a redelivery, after giving the lease back.
func (w *Worker) Process(ctx context.Context, runID string) error {
	r, l, err := w.store.Claim(ctx, runID, w.owner, w.cfg.Lease)
	if errors.Is(err, jobs.ErrNoWork) {
		return nil
	}
	if errors.Is(err, ErrOrganizationBusy) {
		w.log.DebugContext(ctx, "run waits for a slot of its organization", "run_id", runID)
		return nil
	}
	if err != nil {
		return err
	}
	// A run that waited or was attempted too long fails here, its claim not counted.
	switch {
	case l.Attempt == 1 && w.now().Sub(r.CreatedAt) > w.cfg.QueuedLimit:
		r.StartedAt, r.ErrorCode, r.Error = nil, CodeQueueTimeout, fmt.Sprintf("The run waited in the queue longer than %s.", w.cfg.QueuedLimit)
	case l.Attempt-r.Resumes > w.cfg.MaxAttempts:
		r.ErrorCode, r.Error = CodeAttemptsExhausted, fmt.Sprintf("The run was attempted %d times without finishing.", l.Attempt-1-r.Resumes)
	}
	if r.ErrorCode != "" {
		r.Status, r.Attempts = run.Failed, l.Attempt-1
		return w.finish(ctx, l, r)
	}
	// A change of the run's status (a cancel, on any replica) renews the lease at once, which
	// then stops the attempt within the notification's delay.
	changed, stop := w.watch(r.ID)
	defer stop()
	var out run.Run
	err = jobs.KeepChecking(ctx, l, w.store.Renew, changed, func(ctx context.Context) (err error) {
		out, err = w.attempt(ctx, l, &r)
		return err
	})
	if errors.Is(err, jobs.ErrLeaseLost) {
		w.log.InfoContext(ctx, "run was cancelled or taken over while it ran", "run_id", r.ID)
		return nil
	}
	if err != nil {
		if ctx.Err() == nil {
			w.log.WarnContext(ctx, "run interrupted; giving the lease back", "run_id", r.ID, "error", err)
		}
		_ = w.store.Release(context.WithoutCancel(ctx), l)
		return err
	}
	if out.Status == run.AwaitingApproval {
		return nil
	}
	return w.finish(ctx, l, out)
}

// watch watches the run's status changes, when the worker has Changes.
func (w *Worker) watch(runID string) (<-chan struct{}, func()) {
	if w.changes == nil {
		return nil, func() {}
	}
	return w.changes.Watch(runID, run.StatusEvent)
}

// finish records the run's end, only while this worker holds the lease.
func (w *Worker) finish(ctx context.Context, l jobs.Lease, r run.Run) error {
	now := w.now()
	r.FinishedAt = &now
	err := w.store.Finish(context.WithoutCancel(ctx), l, r)
	if errors.Is(err, jobs.ErrLeaseLost) {
		w.log.InfoContext(ctx, "run was cancelled or taken over before it finished", "run_id", r.ID)
		return nil
	}
	return err
}

// Sweep gives a new wake-up to runs whose lease lapsed (their worker died) and to Pending jobs
// whose wake-up was lost; the claim that follows fails the runs that waited or were attempted
// too long. It returns how many runs it woke.
func (w *Worker) Sweep(ctx context.Context) (int, error) {
	return w.store.Requeue(ctx, w.now().Add(-w.cfg.StaleAfter), 100)
}

// RunSweeper calls Sweep every interval until ctx is done, logging failures and carrying on;
// it returns nil when ctx ends.
func (w *Worker) RunSweeper(ctx context.Context, every time.Duration) error {
	return jobs.RunRequeuer(ctx, every, w.log, "agent runs", w.Sweep)
}

// reasonOf is an error's message for the run record and the log: the apperr message, never a
// cause that may quote a response.
func reasonOf(err error) string {
	if e, ok := apperr.As(err); ok && e.Message != "" {
		return e.Message
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "The model did not answer in time."
	}
	return "The model call failed."
}

// codeOf is an error's code for the run record.
func codeOf(err error, fallback string) string {
	if e, ok := apperr.As(err); ok && e.Code != "" {
		return e.Code
	}
	return fallback
}
