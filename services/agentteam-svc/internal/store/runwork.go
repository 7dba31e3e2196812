package store

import (
	"context"
	"math"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/pkg/jobs/pgjobs"
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
	// orgCap is how many runs of one organization may be Running at once, across replicas.
	orgCap int
}

// NewRunWork returns a RunWork store that writes events and wake-ups through w and lets each
// organization run orgCap runs at once.
func NewRunWork(db *gorm.DB, w *outbox.Writer, orgCap int) *RunWork {
	return &RunWork{db: db, outbox: w, orgCap: orgCap}
}

// runJobs is the job table of agent runs: one job per run, keyed by the run, Pending until a
// worker leases it (Processing), then Done or Failed with the run.
var runJobs = pgjobs.Table{
	Name: "jobs", Key: "run_id", Ready: []string{string(run.JobPending)}, Leased: string(run.JobProcessing),
	Attempts: "attempts", Touched: "updated_at",
}

// lockRun locks the run's row, before its job's: the order Cancel locks them in.
func lockRun(tx *gorm.DB, id string) error {
	return pgdb.Translate(tx.Exec(`SELECT id FROM agent_runs WHERE id = ? FOR UPDATE`, id).Error, "agent run")
}

// Claim leases the run's job to owner for length and marks the run Running with the attempt,
// and returns the run as claimed. It returns jobs.ErrNoWork when the run's job is finished or
// unknown, a jobs.HeldError while another worker's lease is live and
// runner.ErrOrganizationBusy, changing nothing, while the run's organization has orgCap other
// runs leased.
func (s *RunWork) Claim(ctx context.Context, runID, owner string, length time.Duration) (r run.Run, l jobs.Lease, err error) {
	err = pgdb.InTx(ctx, s.db, func(tx *gorm.DB) (err error) {
		// lockRun's lock, reading the run's organization on the way.
		var orgID string
		if err := tx.Raw(`SELECT organization_id FROM agent_runs WHERE id = ? FOR UPDATE`, runID).Scan(&orgID).Error; err != nil {
			return pgdb.Translate(err, "agent run")
		}
		if orgID == "" {
			return jobs.ErrNoWork
		}
		busy, err := leasedRuns(tx, orgID, runID)
		if err != nil {
			return err
		}
		if busy >= s.orgCap {
			return runner.ErrOrganizationBusy
		}
		if l, err = runJobs.Claim(ctx, tx, runID, owner, length); err != nil {
			return err
		}
		var m runModel
		err = tx.Raw(`UPDATE agent_runs SET status = ?, attempts = ?, started_at = COALESCE(started_at, now()), updated_at = now()
			WHERE id = ? RETURNING *`, run.Running, l.Attempt, runID).Scan(&m).Error
		r = m.toDomain()
		return pgdb.Translate(err, "agent run")
	})
	return r, l, err
}

// Renew extends the lease l; jobs.ErrLeaseLost when it no longer holds the run's job.
func (s *RunWork) Renew(ctx context.Context, l jobs.Lease) error { return runJobs.Renew(ctx, s.db, l) }

// Release gives the lease l back; jobs.ErrLeaseLost when it no longer holds the run's job.
func (s *RunWork) Release(ctx context.Context, l jobs.Lease) error {
	return runJobs.Release(ctx, s.db, l)
}

// Finish records the end of r (Completed, or Failed with its reason) with its job (Done or
// Failed), its event and audit entry, in one transaction, if l still holds the run's job (so
// the run is Running); otherwise it changes nothing and returns jobs.ErrLeaseLost. A call of
// the run still waiting for a person (a limit ended the run meanwhile) ends Rejected.
func (s *RunWork) Finish(ctx context.Context, l jobs.Lease, r run.Run) error {
	status, lastError := run.JobDone, ""
	if r.Status != run.Completed {
		status, lastError = run.JobFailed, r.Error
	}
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := lockRun(tx, r.ID); err != nil {
			return err
		}
		if err := runJobs.Finish(ctx, tx, l, string(status), map[string]any{"last_error": lastError}); err != nil {
			return err
		}
		r.UpdatedAt = time.Now().UTC()
		m, err := toRunModel(r)
		if err != nil {
			return err
		}
		if err := tx.Save(&m).Error; err != nil {
			return pgdb.Translate(err, "agent run")
		}
		if err := endWaitingCalls(tx, r.ID, EndedCall); err != nil {
			return err
		}
		if err := wakeWaiting(ctx, tx, s.outbox, r.OrganizationID, s.orgCap); err != nil {
			return err
		}
		return s.ended(ctx, tx, r)
	})
}

// Park records r AwaitingApproval with its job Parked (no lease: neither claimable nor swept),
// in one transaction, if l still holds the run's job and a tool call of the run still waits for
// a person. It returns runner.ErrNoneWaiting, changing nothing, when every waiting call was
// decided meanwhile, and jobs.ErrLeaseLost when l no longer holds the job.
func (s *RunWork) Park(ctx context.Context, l jobs.Lease, r run.Run) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := lockRun(tx, r.ID); err != nil {
			return err
		}
		var waiting int64
		if err := tx.Model(&stepModel{}).Where("run_id = ? AND status = ?", r.ID, run.CallAwaitingApproval).Count(&waiting).Error; err != nil {
			return pgdb.Translate(err, "run step")
		}
		if waiting == 0 {
			return runner.ErrNoneWaiting
		}
		if err := runJobs.Finish(ctx, tx, l, string(run.JobParked), nil); err != nil {
			return err
		}
		r.Status, r.UpdatedAt = run.AwaitingApproval, time.Now().UTC()
		m, err := toRunModel(r)
		if err != nil {
			return err
		}
		if err := tx.Save(&m).Error; err != nil {
			return pgdb.Translate(err, "agent run")
		}
		// A parked run holds no slot: the organization's next waiting run may take it.
		return wakeWaiting(ctx, tx, s.outbox, r.OrganizationID, s.orgCap)
	})
}

// lockOrganizationRuns takes the transaction's lock on the organization's running runs: the
// claims that count them and the ends that wake its waiting runs are serialized per
// organization, across replicas. It is taken after the run row's lock (lockRun), never before.
func lockOrganizationRuns(tx *gorm.DB, orgID string) error {
	err := tx.Exec(`SELECT pg_advisory_xact_lock(hashtextextended('agentteam.org_runs:' || ?, 0))`, orgID).Error
	return pgdb.Translate(err, "agent run")
}

// leasedRuns takes the organization's lock and counts its runs other than except whose job a
// live lease holds; a run whose worker died stops counting once its lease lapses.
func leasedRuns(tx *gorm.DB, orgID, except string) (int, error) {
	if err := lockOrganizationRuns(tx, orgID); err != nil {
		return 0, err
	}
	var n int
	err := tx.Raw(`SELECT count(*) FROM agent_runs r JOIN jobs j ON j.run_id = r.id
		WHERE r.organization_id = ? AND r.status = ? AND r.id::text <> ? AND j.status = ? AND j.lease_until > now()`,
		orgID, run.Running, except, run.JobProcessing).Scan(&n).Error
	return n, pgdb.Translate(err, "agent run")
}

// wakeWaiting, in tx after a run of the organization stopped holding a slot, gives a wake-up to
// as many of its oldest Queued runs as it has free slots of orgCap: the wake-ups that found the
// organization busy were dropped (runner.ErrOrganizationBusy), and the ends of its runs bring
// them back in order. Ends that commit together each wake the oldest free-slot many, so no free
// slot waits for the sweeper; a run woken twice is claimed once.
func wakeWaiting(ctx context.Context, tx *gorm.DB, w *outbox.Writer, orgID string, orgCap int) error {
	busy, err := leasedRuns(tx, orgID, "")
	if err != nil || busy >= orgCap {
		return err
	}
	var waiting []struct {
		JobID string
		Run   runModel `gorm:"embedded"`
	}
	err = tx.Raw(`SELECT j.id AS job_id, r.* FROM agent_runs r JOIN jobs j ON j.run_id = r.id
		WHERE r.organization_id = ? AND r.status = ? AND j.status = ? ORDER BY r.created_at, r.id LIMIT ?`,
		orgID, run.Queued, run.JobPending, orgCap-busy).Scan(&waiting).Error
	if err != nil {
		return pgdb.Translate(err, "agent run")
	}
	for _, q := range waiting {
		if err := wakeRun(ctx, tx, w, q.JobID, q.Run.toDomain()); err != nil {
			return err
		}
	}
	return nil
}

// Requeue gives a new wake-up to up to limit runs whose job's lease lapsed (its worker died)
// or whose job waited untouched since staleBefore (its wake-up was lost); it returns how many.
func (s *RunWork) Requeue(ctx context.Context, staleBefore time.Time, limit int) (int, error) {
	var requeued []jobModel
	return runJobs.Requeue(ctx, s.db, staleBefore, limit, &requeued, func(tx *gorm.DB) error {
		for _, j := range requeued {
			var m runModel
			if err := takeRun(tx, j.RunID, &m); err != nil {
				return err
			}
			if err := wakeRun(ctx, tx, s.outbox, j.ID, m.toDomain()); err != nil {
				return err
			}
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
		MonthlyTokenBudget: m.MonthlyTokenBudget, Autonomy: m.Autonomy,
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

// toInt32 fits a count into an event's int32 field, saturating: token counts come from model
// providers, whose answers the platform does not control, and must not wrap to negative.
func toInt32(n int) int32 {
	return int32(min(max(n, math.MinInt32), math.MaxInt32)) // #nosec G115 -- clamped to the int32 range on this line
}
