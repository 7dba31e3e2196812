package store

import (
	"context"
	"math"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	agentteamv1 "github.com/motionstudio/platform/proto-events/gen/agentteam/v1"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/runner"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/seat"
)

// RunWork implements runner.Store on the agent_runs and jobs models of runs.go.
type RunWork struct {
	db     *gorm.DB
	outbox *outbox.Writer
}

// NewRunWork returns a RunWork store that writes events and wake-ups through w.
func NewRunWork(db *gorm.DB, w *outbox.Writer) *RunWork { return &RunWork{db: db, outbox: w} }

func (m jobModel) toDomain() run.Job {
	return run.Job{
		ID: m.ID, Kind: m.Kind, RunID: m.RunID, Status: run.JobStatus(m.Status), Attempts: m.Attempts, LeaseOwner: m.LeaseOwner,
		LeaseUntil: m.LeaseUntil, LastError: m.LastError, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

func toJobModel(j run.Job) jobModel {
	return jobModel{
		ID: j.ID, Kind: j.Kind, RunID: j.RunID, Status: string(j.Status), Attempts: j.Attempts, LeaseOwner: j.LeaseOwner,
		LeaseUntil: j.LeaseUntil, LastError: j.LastError, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt,
	}
}

// workRow is a run with its job, read by one locking query.
type workRow struct {
	Run runModel `gorm:"embedded"`
	Job jobModel `gorm:"embedded;embeddedPrefix:job_"`
}

// UpdateWork locks the run and its job in one statement (the run's row first, the order Cancel
// uses), calls fn and saves both; a wake-up asked for and the event and audit entry of a run
// that fn ended go in the same transaction. It returns run.NotFound when the run or its job does
// not exist, and fn's error.
func (s *RunWork) UpdateWork(ctx context.Context, runID string, fn func(*runner.Work) error) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var rows []workRow
		err := tx.Raw(`SELECT r.*, j.id AS job_id, j.kind AS job_kind, j.run_id AS job_run_id, j.status AS job_status,
				j.attempts AS job_attempts, j.lease_owner AS job_lease_owner, j.lease_until AS job_lease_until,
				j.last_error AS job_last_error, j.created_at AS job_created_at, j.updated_at AS job_updated_at
			FROM agent_runs r JOIN jobs j ON j.run_id = r.id WHERE r.id = ? FOR UPDATE`, runID).Scan(&rows).Error
		if err != nil {
			return pgdb.Translate(err, "agent run")
		}
		if len(rows) == 0 {
			return run.NotFound()
		}
		rm := rows[0].Run
		w := runner.Work{Run: rm.toDomain(), Job: rows[0].Job.toDomain()}
		if err := fn(&w); err != nil {
			return err
		}
		now := time.Now().UTC()
		w.Run.UpdatedAt, w.Job.UpdatedAt = now, now
		m, err := toRunModel(w.Run)
		if err != nil {
			return err
		}
		if err := tx.Save(&m).Error; err != nil {
			return pgdb.Translate(err, "agent run")
		}
		j := toJobModel(w.Job)
		if err := tx.Save(&j).Error; err != nil {
			return pgdb.Translate(err, "job")
		}
		if w.Wake {
			wake := &agentteamv1.AgentRunJob{RunId: runID, JobId: j.ID, SeatId: m.SeatID, WorkItemId: m.WorkItemID,
				OrganizationId: m.OrganizationID}
			if _, err := s.outbox.Add(ctx, tx, events.SubjectAgentRunJob, events.SubjectAgentRunJob, wake); err != nil {
				return err
			}
		}
		if run.Status(rm.Status).Active() && !w.Run.Status.Active() && w.Run.Status != run.Cancelled {
			return s.ended(ctx, tx, w.Run)
		}
		return nil
	})
}

// ended writes the event and the system audit entry of a run that just completed or failed.
func (s *RunWork) ended(ctx context.Context, tx *gorm.DB, r run.Run) error {
	var finished *timestamppb.Timestamp
	if r.FinishedAt != nil {
		finished = timestamppb.New(*r.FinishedAt)
	}
	agentID := ""
	if r.AgentID != nil {
		agentID = *r.AgentID
	}
	var (
		subject string
		ev      proto.Message
		e       audit.Entry
	)
	if r.Status == run.Completed {
		connID := ""
		if r.ConnectionID != nil {
			connID = *r.ConnectionID
		}
		subject = events.SubjectRunCompleted
		ev = &agentteamv1.RunCompleted{
			RunId: r.ID, OrganizationId: r.OrganizationID, TeamId: r.TeamID, SeatId: r.SeatID, WorkItemId: r.WorkItemID,
			AgentId: agentID, ConnectionId: connID, PromptTokens: toInt32(r.PromptTokens), CompletionTokens: toInt32(r.CompletionTokens),
			Attempts: toInt32(r.Attempts), FinishedAt: finished,
		}
		e = audit.New(r.OrganizationID, "", "run.completed", "AgentRun", r.ID, "")
	} else {
		subject = events.SubjectRunFailed
		ev = &agentteamv1.RunFailed{
			RunId: r.ID, OrganizationId: r.OrganizationID, TeamId: r.TeamID, SeatId: r.SeatID, WorkItemId: r.WorkItemID,
			AgentId: agentID, ErrorCode: r.ErrorCode, Error: r.Error, Attempts: toInt32(r.Attempts), FinishedAt: finished,
		}
		e = audit.New(r.OrganizationID, "", "run.failed", "AgentRun", r.ID, r.ErrorCode)
	}
	if _, err := s.outbox.Add(ctx, tx, subject, subject, ev); err != nil {
		return err
	}
	return writeAudit(tx, e)
}

// Agent returns the agent with its seat's role name, in one query; seat.NoAgent for an unknown
// id.
func (s *RunWork) Agent(ctx context.Context, agentID string) (runner.Agent, error) {
	var rows []struct {
		Agent    agentModel `gorm:"embedded"`
		RoleName string
	}
	err := s.db.WithContext(ctx).Raw(`SELECT a.*, s.role_name FROM agents a JOIN seats s ON s.id = a.seat_id WHERE a.id = ?`, agentID).
		Scan(&rows).Error
	if err != nil {
		return runner.Agent{}, pgdb.Translate(err, "agent")
	}
	if len(rows) == 0 {
		return runner.Agent{}, seat.NoAgent()
	}
	m := rows[0].Agent
	return runner.Agent{
		ID: m.ID, OrganizationID: m.OrganizationID, Name: m.Name, RoleName: rows[0].RoleName, Persona: m.Persona, APIConfigID: m.APIConfigID,
		FallbackAPIConfigID: m.FallbackAPIConfigID, SkillKeys: nonNil(m.SkillKeys), MCPServerIDs: nonNil(m.MCPServerIDs),
		MonthlyTokenBudget: m.MonthlyTokenBudget,
	}, nil
}

// SeatAgent returns the id of the seat's agent; seat.NoAgent when it has none.
func (s *RunWork) SeatAgent(ctx context.Context, seatID string) (string, error) {
	var ids []string
	if err := s.db.WithContext(ctx).Model(&agentModel{}).Where("seat_id = ?", seatID).Pluck("id", &ids).Error; err != nil {
		return "", pgdb.Translate(err, "agent")
	}
	if len(ids) == 0 {
		return "", seat.NoAgent()
	}
	return ids[0], nil
}

// Task returns the work item with the identity of its team's product (empty without one).
func (s *RunWork) Task(ctx context.Context, workItemID string) (runner.Task, error) {
	var rows []runner.Task
	err := s.db.WithContext(ctx).Raw(`SELECT w.title, w.description, w.type,
			COALESCE(p.name, '') AS product_name, COALESCE(p.identity, '') AS product_identity
		FROM work_items w JOIN teams t ON t.id = w.team_id LEFT JOIN products p ON p.id = t.product_id
		WHERE w.id = ?`, workItemID).Scan(&rows).Error
	if err != nil {
		return runner.Task{}, pgdb.Translate(err, "work item")
	}
	if len(rows) == 0 {
		return runner.Task{}, pgdb.Translate(gorm.ErrRecordNotFound, "work item")
	}
	return rows[0], nil
}

// TokensUsed sums the tokens of the agent's runs created since.
func (s *RunWork) TokensUsed(ctx context.Context, agentID string, since time.Time) (int64, error) {
	var total int64
	err := s.db.WithContext(ctx).Model(&runModel{}).Select("COALESCE(SUM(prompt_tokens + completion_tokens), 0)").
		Where("agent_id = ? AND created_at >= ?", agentID, since).Scan(&total).Error
	return total, pgdb.Translate(err, "agent run")
}

// Sweepable lists active runs whose job has a lapsed lease, is Pending and untouched since
// staleBefore, or whose run is Queued since before queuedBefore; oldest first.
func (s *RunWork) Sweepable(ctx context.Context, now, staleBefore, queuedBefore time.Time, limit int) ([]string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Raw(`SELECT r.id FROM jobs j JOIN agent_runs r ON r.id = j.run_id
		WHERE r.status IN ('Queued', 'Running') AND (
			(j.status = 'Processing' AND (j.lease_until IS NULL OR j.lease_until < ?))
			OR (j.status = 'Pending' AND j.updated_at < ?)
			OR (r.status = 'Queued' AND r.created_at < ?))
		ORDER BY j.updated_at LIMIT ?`, now, staleBefore, queuedBefore, limit).Scan(&ids).Error
	return ids, pgdb.Translate(err, "job")
}

// toInt32 fits a count into an event's int32 field, saturating: token counts come from model
// providers, whose answers the platform does not control, and must not wrap to negative.
func toInt32(n int) int32 {
	return int32(min(max(n, math.MinInt32), math.MaxInt32)) // #nosec G115 -- clamped to the int32 range on this line
}
