package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	agentteamv1 "github.com/motionstudio/platform/proto-events/gen/agentteam/v1"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

type runModel struct {
	ID                string `gorm:"primaryKey"`
	OrganizationID    string
	TeamID            string
	SeatID            string
	WorkItemID        string
	AgentID           *string
	Status            string
	ActionType        string
	ActionRisk        string
	Prompt            string
	Output            string
	Error             string
	ErrorCode         string
	Attempts          int
	Resumes           int
	ConnectionID      *string
	PromptTokens      int
	CompletionTokens  int
	SkippedMCPServers string `gorm:"column:skipped_mcp_servers"`
	CreatedAt         time.Time
	StartedAt         *time.Time
	FinishedAt        *time.Time
	UpdatedAt         time.Time
}

func (runModel) TableName() string { return "agent_runs" }

// skippedServerJSON is the stored form of one skipped MCP server.
type skippedServerJSON struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

func toRunModel(r run.Run) (runModel, error) {
	skipped := make([]skippedServerJSON, len(r.SkippedMCPServers))
	for i, s := range r.SkippedMCPServers {
		skipped[i] = skippedServerJSON(s)
	}
	raw, err := json.Marshal(skipped)
	if err != nil {
		return runModel{}, fmt.Errorf("store: encode skipped servers: %w", err)
	}
	return runModel{
		ID: r.ID, OrganizationID: r.OrganizationID, TeamID: r.TeamID, SeatID: r.SeatID, WorkItemID: r.WorkItemID,
		AgentID: r.AgentID, Status: string(r.Status), ActionType: r.ActionType, ActionRisk: r.ActionRisk, Prompt: r.Prompt,
		Output: r.Output, Error: r.Error, ErrorCode: r.ErrorCode, Attempts: r.Attempts, Resumes: r.Resumes, ConnectionID: r.ConnectionID,
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, SkippedMCPServers: string(raw),
		CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, UpdatedAt: r.UpdatedAt,
	}, nil
}

func (m runModel) toDomain() run.Run {
	var skipped []skippedServerJSON
	// The column is written only by toRunModel; an unreadable value is shown as no skipped server.
	_ = json.Unmarshal([]byte(m.SkippedMCPServers), &skipped)
	out := make([]run.SkippedServer, len(skipped))
	for i, s := range skipped {
		out[i] = run.SkippedServer(s)
	}
	return run.Run{
		ID: m.ID, OrganizationID: m.OrganizationID, TeamID: m.TeamID, SeatID: m.SeatID, WorkItemID: m.WorkItemID,
		AgentID: m.AgentID, Status: run.Status(m.Status), ActionType: m.ActionType, ActionRisk: m.ActionRisk, Prompt: m.Prompt,
		Output: m.Output, Error: m.Error, ErrorCode: m.ErrorCode, Attempts: m.Attempts, Resumes: m.Resumes, ConnectionID: m.ConnectionID,
		PromptTokens: m.PromptTokens, CompletionTokens: m.CompletionTokens, SkippedMCPServers: out,
		CreatedAt: m.CreatedAt, StartedAt: m.StartedAt, FinishedAt: m.FinishedAt, UpdatedAt: m.UpdatedAt,
	}
}

type jobModel struct {
	ID         string `gorm:"primaryKey"`
	Kind       string
	RunID      string
	Status     string
	Attempts   int
	LeaseOwner string
	LeaseUntil *time.Time
	LastError  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (jobModel) TableName() string { return "jobs" }

// Runs persists agent runs and their jobs.
type Runs struct {
	db     *gorm.DB
	outbox *outbox.Writer
	// orgCap is how many runs of one organization may be Running at once (RunWork's).
	orgCap int
}

// NewRuns returns a Runs store that wakes workers through w; a cancelled Running run frees one
// of its organization's orgCap slots for the next waiting run.
func NewRuns(db *gorm.DB, w *outbox.Writer, orgCap int) *Runs {
	return &Runs{db: db, outbox: w, orgCap: orgCap}
}

// Enqueue queues r with the audit entry in one transaction (see enqueueRun): created is false
// when the work item already had an active run for the seat, which is returned instead and
// nothing is written.
func (s *Runs) Enqueue(ctx context.Context, r run.Run, e audit.Entry) (queued run.Run, created bool, err error) {
	err = pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if queued, created, err = enqueueRun(ctx, tx, s.outbox, r); err != nil || !created {
			return err
		}
		return writeAudit(tx, e)
	})
	return queued, created, err
}

// Run returns run.NotFound for an unknown id.
func (s *Runs) Run(ctx context.Context, id string) (run.Run, error) {
	var m runModel
	if err := takeRun(s.db.WithContext(ctx), id, &m); err != nil {
		return run.Run{}, err
	}
	return m.toDomain(), nil
}

func takeRun(db *gorm.DB, id string, m *runModel) error {
	return takeByID(db, id, m, "agent run", run.NotFound)
}

// RunsOf lists the runs of a work item (column "work_item_id") or a seat ("seat_id"), newest
// first.
func (s *Runs) RunsOf(ctx context.Context, column, id string, p org.Page) ([]run.Run, error) {
	if column != "work_item_id" && column != "seat_id" {
		return nil, fmt.Errorf("store: list runs by %q", column)
	}
	var rows []runModel
	err := s.db.WithContext(ctx).Where(column+" = ?", id).Order("created_at DESC, id DESC").
		Offset(p.Offset).Limit(p.Limit).Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "agent run")
	}
	return mapAll(rows, runModel.toDomain), nil
}

// Cancel locks the run, lets cancel change it, and stores the run, its job finished (Done, so
// no worker claims it again; a parked job included), the tool calls still waiting for a person
// Rejected (no one can decide them any more), a wake-up for the organization's next waiting run
// when a Running run gave up its slot, and the audit entry in one transaction. It returns
// run.NotFound for an unknown run and cancel's error unchanged.
func (s *Runs) Cancel(ctx context.Context, id string, cancel func(*run.Run) (audit.Entry, error)) (run.Run, error) {
	var out run.Run
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var m runModel
		if err := takeRun(tx.Clauses(clause.Locking{Strength: "UPDATE"}), id, &m); err != nil {
			return err
		}
		out = m.toDomain()
		e, err := cancel(&out)
		if err != nil {
			return err
		}
		err = tx.Model(&runModel{ID: id}).Updates(map[string]any{
			"status": string(out.Status), "error": out.Error, "error_code": out.ErrorCode, "finished_at": out.FinishedAt, "updated_at": out.UpdatedAt,
		}).Error
		if err != nil {
			return pgdb.Translate(err, "agent run")
		}
		err = tx.Model(&jobModel{}).Where("run_id = ? AND status IN ?", id, []string{string(run.JobPending), string(run.JobProcessing), string(run.JobParked)}).
			Updates(map[string]any{"status": string(run.JobDone), "lease_owner": "", "lease_until": nil, "last_error": out.Error, "updated_at": out.UpdatedAt}).Error
		if err != nil {
			return pgdb.Translate(err, "job")
		}
		if err := endWaitingCalls(tx, id, CancelledCall); err != nil {
			return err
		}
		if m.Status == string(run.Running) {
			if err := wakeWaiting(ctx, tx, s.outbox, out.OrganizationID, s.orgCap); err != nil {
				return err
			}
		}
		return writeAudit(tx, e)
	})
	return out, err
}

// Results of the tool calls still waiting for a person (or approved but not yet made) when their
// run was cancelled or ended.
const (
	CancelledCall = "The call was not made: the run was cancelled before it was."
	EndedCall     = "The call was not made: the run ended before it was."
)

// endWaitingCalls records, inside tx, the run's calls that wait for a person or were approved
// but not made as Rejected with result: nobody can decide or make them any more.
func endWaitingCalls(tx *gorm.DB, runID, result string) error {
	err := tx.Model(&stepModel{}).Where("run_id = ? AND status IN ?", runID, []string{run.CallAwaitingApproval, run.CallApproved}).
		Updates(map[string]any{"status": run.CallRejected, "result": result}).Error
	return pgdb.Translate(err, "run step")
}

// enqueueAttempts bounds how often enqueueRun retries when the active run it collided with
// finished before it could be read.
const enqueueAttempts = 3

// enqueueRun queues r inside tx, the caller's transaction: the run (Queued, with r's id), its job
// (kind agent.run, Pending) and the worker's wake-up on the outbox. The unique index on active
// runs keeps one active run per (work item, seat) under any concurrency: when one exists, nothing
// is inserted and that run is returned with created false.
func enqueueRun(ctx context.Context, tx *gorm.DB, w *outbox.Writer, r run.Run) (run.Run, bool, error) {
	now := time.Now().UTC()
	r.Status, r.CreatedAt, r.UpdatedAt = run.Queued, now, now
	m, err := toRunModel(r)
	if err != nil {
		return run.Run{}, false, err
	}
	onActive := clause.OnConflict{
		Columns:     []clause.Column{{Name: "work_item_id"}, {Name: "seat_id"}},
		TargetWhere: clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "status IN ('Queued', 'Running', 'AwaitingApproval')"}}},
		DoNothing:   true,
	}
	for range enqueueAttempts {
		res := tx.WithContext(ctx).Clauses(onActive).Create(&m)
		if res.Error != nil {
			return run.Run{}, false, pgdb.Translate(res.Error, "agent run")
		}
		if res.RowsAffected == 1 {
			return r, true, queueJob(ctx, tx, w, r, now)
		}
		var active runModel
		err := tx.WithContext(ctx).Where("work_item_id = ? AND seat_id = ? AND status IN ?", r.WorkItemID, r.SeatID,
			run.ActiveStatuses).Take(&active).Error
		if err == nil {
			return active.toDomain(), false, nil
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return run.Run{}, false, pgdb.Translate(err, "agent run")
		}
	}
	return run.Run{}, false, fmt.Errorf("store: enqueue run for %s: the active run kept changing", r.WorkItemID)
}

func queueJob(ctx context.Context, tx *gorm.DB, w *outbox.Writer, r run.Run, now time.Time) error {
	job := jobModel{ID: newID(), Kind: run.JobKindAgentRun, RunID: r.ID, Status: string(run.JobPending), CreatedAt: now, UpdatedAt: now}
	if err := tx.WithContext(ctx).Create(&job).Error; err != nil {
		return pgdb.Translate(err, "job")
	}
	return wakeRun(ctx, tx, w, job.ID, r)
}

// wakeRun writes the wake-up of the run's job to the outbox in tx.
func wakeRun(ctx context.Context, tx *gorm.DB, w *outbox.Writer, jobID string, r run.Run) error {
	wake := &agentteamv1.AgentRunJob{RunId: r.ID, JobId: jobID, SeatId: r.SeatID, WorkItemId: r.WorkItemID,
		OrganizationId: r.OrganizationID}
	if _, err := w.Add(ctx, tx, events.SubjectAgentRunJob, events.SubjectAgentRunJob, wake); err != nil {
		return fmt.Errorf("store: wake run %s: %w", r.ID, err)
	}
	return nil
}

// RunQueueQuery measures the agent runs queued and running, for pgdb.NewJobQueueCollector,
// from the agent_runs_active_key partial index; both states are answered, empty or not.
const RunQueueQuery = `SELECT 'agent_runs', s.status, count(r.id)::float8,
	COALESCE(EXTRACT(EPOCH FROM now() - min(r.created_at)), 0)::float8
	FROM (VALUES ('Queued'), ('Running')) AS s (status)
	LEFT JOIN agent_runs r ON r.status = s.status
	GROUP BY s.status`
