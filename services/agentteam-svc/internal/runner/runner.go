// Package runner executes queued agent runs. A worker claims a run's job with a lease (run
// Running, job Processing, one more attempt), renews the lease while the model answers,
// assembles the prompt (product identity, persona, team memory, skills, MCP tool catalog, each
// framed as data, then the task), calls the agent's model connection with retries and the
// fallback connection, and finishes the run Completed or Failed (job Done or Failed) with its
// prompt, output, usage and reason, only while it still holds the lease. A sweeper requeues
// runs whose worker died, re-wakes runs whose wake-up was lost, and fails runs that waited or
// were attempted too long. A cancelled run is never run or finished over.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
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
)

// Config tunes the worker.
type Config struct {
	Lease       time.Duration
	MaxAttempts int
	QueuedLimit time.Duration
	StaleAfter  time.Duration
	Retry       Retry
}

// Work is a run and its job, read and written together under a row lock.
type Work struct {
	Run run.Run
	Job run.Job
	// Wake asks the store to publish a new wake-up for the job in the same transaction.
	Wake bool
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
	// UpdateWork locks the run and its job, calls fn, and saves both when fn returns nil; a
	// run that fn moved from Queued or Running to Completed or Failed gets its event and audit
	// entry in the same transaction. fn's error is returned and nothing is saved.
	UpdateWork(ctx context.Context, runID string, fn func(*Work) error) error
	// Agent returns the run's agent (by id), or a NotFound error.
	Agent(ctx context.Context, agentID string) (Agent, error)
	// SeatAgent returns the id of the seat's agent, or a NotFound error.
	SeatAgent(ctx context.Context, seatID string) (string, error)
	// Task returns the work item with its product's identity (empty without a product).
	Task(ctx context.Context, workItemID string) (Task, error)
	// TokensUsed sums the prompt and completion tokens of the agent's runs created since.
	TokensUsed(ctx context.Context, agentID string, since time.Time) (int64, error)
	// Sweepable lists up to limit active runs whose job needs the sweeper at now: a lapsed
	// lease, a Pending job untouched since staleBefore, or a run Queued since queuedBefore.
	Sweepable(ctx context.Context, now, staleBefore, queuedBefore time.Time, limit int) ([]string, error)
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

// Deps are what a Worker needs.
type Deps struct {
	Store       Store
	Connections Connections
	Model       Model
	Tools       connection.ToolLister
	Memory      Memory
	Skills      Skills
	Log         *slog.Logger
	Now         func() time.Time
	// Owner names this worker's leases (unique per process).
	Owner string
}

// Worker executes runs.
type Worker struct {
	cfg    Config
	store  Store
	conns  Connections
	model  Model
	tools  connection.ToolLister
	memory Memory
	skills Skills
	log    *slog.Logger
	now    func() time.Time
	owner  string
}

// NewWorker returns a Worker.
func NewWorker(cfg Config, d Deps) *Worker {
	return &Worker{
		cfg: cfg, store: d.Store, conns: d.Connections, model: d.Model, tools: d.Tools, memory: d.Memory, skills: d.Skills,
		log: d.Log, now: d.Now, owner: d.Owner,
	}
}

// LeaseHeld says another worker holds the run's lease until Until; the job should come back
// then.
type LeaseHeld struct{ Until time.Time }

func (e *LeaseHeld) Error() string {
	return "runner: run leased by another worker until " + e.Until.Format(time.RFC3339)
}

// errNotMine stops an update that found the run finished, cancelled or leased to another.
var errNotMine = errors.New("runner: the run is no longer this worker's")

// Process executes the run if it is claimable. It returns nil when the run is finished, was
// never this worker's, or ended here; a *LeaseHeld when another worker's lease is live; and
// other errors (the database) for a redelivery, after giving the lease back.
func (w *Worker) Process(ctx context.Context, runID string) error {
	work, claimed, err := w.claim(ctx, runID)
	if err != nil || !claimed {
		return err
	}
	r := work.Run
	out, err := w.execute(ctx, &r)
	if errors.Is(err, errNotMine) {
		w.log.InfoContext(ctx, "run was cancelled or taken over while it ran", "run_id", r.ID)
		return nil
	}
	if err != nil {
		if ctx.Err() == nil {
			w.log.WarnContext(ctx, "run interrupted; giving the lease back", "run_id", r.ID, "error", err)
		}
		_ = w.release(context.WithoutCancel(ctx), r.ID)
		return err
	}
	return w.finish(ctx, out)
}

// claim takes the run's lease, or fails a run that waited or was attempted too long.
func (w *Worker) claim(ctx context.Context, runID string) (Work, bool, error) {
	var (
		out     Work
		claimed bool
	)
	err := w.store.UpdateWork(ctx, runID, func(wk *Work) error {
		now := w.now()
		switch {
		case !wk.Run.Status.Active() || wk.Job.Status == run.JobDone || wk.Job.Status == run.JobFailed:
			return errNotMine
		case wk.Job.Status == run.JobProcessing && wk.Job.LeaseUntil != nil && wk.Job.LeaseUntil.After(now):
			return &LeaseHeld{Until: *wk.Job.LeaseUntil}
		case wk.Run.Status == run.Queued && now.Sub(wk.Run.CreatedAt) > w.cfg.QueuedLimit:
			failWork(wk, now, CodeQueueTimeout, fmt.Sprintf("The run waited in the queue longer than %s.", w.cfg.QueuedLimit))
		case wk.Job.Attempts >= w.cfg.MaxAttempts:
			failWork(wk, now, CodeAttemptsExhausted, fmt.Sprintf("The run was attempted %d times without finishing.", wk.Job.Attempts))
		default:
			until := now.Add(w.cfg.Lease)
			wk.Job.Status, wk.Job.Attempts, wk.Job.LeaseOwner, wk.Job.LeaseUntil = run.JobProcessing, wk.Job.Attempts+1, w.owner, &until
			wk.Run.Status, wk.Run.Attempts = run.Running, wk.Job.Attempts
			if wk.Run.StartedAt == nil {
				wk.Run.StartedAt = &now
			}
			claimed = true
		}
		out = *wk
		return nil
	})
	if errors.Is(err, errNotMine) || apperr.Is(err, apperr.NotFound) {
		return Work{}, false, nil
	}
	return out, claimed, err
}

// failWork ends a run Failed with its job.
func failWork(wk *Work, now time.Time, code, msg string) {
	wk.Run.Status, wk.Run.ErrorCode, wk.Run.Error, wk.Run.FinishedAt = run.Failed, code, msg, &now
	wk.Job.Status, wk.Job.LastError, wk.Job.LeaseUntil = run.JobFailed, msg, nil
}

// mine reports whether this worker still holds the run's live lease.
func (w *Worker) mine(wk *Work) bool {
	return wk.Run.Status == run.Running && wk.Job.Status == run.JobProcessing && wk.Job.LeaseOwner == w.owner
}

// renew extends this worker's lease; errNotMine when it was lost (cancelled, taken over).
func (w *Worker) renew(ctx context.Context, runID string) error {
	return w.store.UpdateWork(ctx, runID, func(wk *Work) error {
		if !w.mine(wk) {
			return errNotMine
		}
		until := w.now().Add(w.cfg.Lease)
		wk.Job.LeaseUntil = &until
		return nil
	})
}

// release gives the lease back so that a redelivery can claim the run at once.
func (w *Worker) release(ctx context.Context, runID string) error {
	return w.store.UpdateWork(ctx, runID, func(wk *Work) error {
		if !w.mine(wk) {
			return errNotMine
		}
		wk.Job.LeaseUntil = nil
		return nil
	})
}

// finish records the run's end, only while this worker holds the lease.
func (w *Worker) finish(ctx context.Context, r run.Run) error {
	err := w.store.UpdateWork(context.WithoutCancel(ctx), r.ID, func(wk *Work) error {
		if !w.mine(wk) {
			return errNotMine
		}
		now := w.now()
		wk.Run = r
		wk.Run.FinishedAt = &now
		wk.Job.LeaseUntil = nil
		if r.Status == run.Completed {
			wk.Job.Status, wk.Job.LastError = run.JobDone, ""
		} else {
			wk.Job.Status, wk.Job.LastError = run.JobFailed, r.Error
		}
		return nil
	})
	if errors.Is(err, errNotMine) {
		w.log.InfoContext(ctx, "run was cancelled or taken over before it finished", "run_id", r.ID)
		return nil
	}
	return err
}

// Sweep requeues runs whose lease lapsed (or fails them once attempts are used up), re-wakes
// Pending jobs whose wake-up was lost, and fails runs queued too long. It returns how many runs
// it changed.
func (w *Worker) Sweep(ctx context.Context) (int, error) {
	now := w.now()
	ids, err := w.store.Sweepable(ctx, now, now.Add(-w.cfg.StaleAfter), now.Add(-w.cfg.QueuedLimit), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		err := w.store.UpdateWork(ctx, id, func(wk *Work) error { return w.sweepOne(wk, w.now()) })
		switch {
		case err == nil:
			n++
		case errors.Is(err, errNotMine) || apperr.Is(err, apperr.NotFound):
		default:
			return n, err
		}
	}
	return n, nil
}

// sweepOne decides what the sweeper does with one run, under its lock.
func (w *Worker) sweepOne(wk *Work, now time.Time) error {
	if !wk.Run.Status.Active() || wk.Job.Status == run.JobDone || wk.Job.Status == run.JobFailed {
		return errNotMine
	}
	if wk.Run.Status == run.Queued && now.Sub(wk.Run.CreatedAt) > w.cfg.QueuedLimit {
		failWork(wk, now, CodeQueueTimeout, fmt.Sprintf("The run waited in the queue longer than %s.", w.cfg.QueuedLimit))
		return nil
	}
	if wk.Job.Status == run.JobProcessing {
		if wk.Job.LeaseUntil != nil && wk.Job.LeaseUntil.After(now) {
			return errNotMine
		}
		if wk.Job.Attempts >= w.cfg.MaxAttempts {
			failWork(wk, now, CodeAttemptsExhausted, fmt.Sprintf("The run was attempted %d times; its worker stopped each time before finishing.", wk.Job.Attempts))
			return nil
		}
		wk.Job.Status, wk.Job.LeaseUntil, wk.Job.LastError = run.JobPending, nil, "The worker's lease lapsed; the run was requeued."
	}
	wk.Wake = true
	return nil
}

// RunSweeper calls Sweep every interval until ctx is done, logging failures and carrying on;
// it returns nil when ctx ends.
func (w *Worker) RunSweeper(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		n, err := w.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			w.log.ErrorContext(ctx, "sweep agent runs", "error", err)
		}
		if n > 0 {
			w.log.InfoContext(ctx, "swept agent runs", "count", n)
		}
	}
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
