package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// Approvals answers a page of the tool calls waiting for a person in the organization's active
// runs, oldest first, and how many there are in all.
func (s *Runs) Approvals(ctx context.Context, organizationID string, p org.Page) ([]run.Approval, int, error) {
	const from = ` FROM run_steps s JOIN agent_runs r ON r.id = s.run_id
		WHERE s.status = ? AND r.organization_id = ? AND r.status IN ?`
	args := []any{run.CallAwaitingApproval, organizationID, run.ActiveStatuses}
	var total int
	if err := s.db.WithContext(ctx).Raw(`SELECT count(*)`+from, args...).Scan(&total).Error; err != nil {
		return nil, 0, pgdb.Translate(err, "run step")
	}
	var rows []struct {
		RunID, CallID, ToolName, FunctionName, Risk, Arguments string
		MCPServerID                                            *string `gorm:"column:mcp_server_id"`
		CreatedAt                                              time.Time
	}
	err := s.db.WithContext(ctx).Raw(`SELECT s.run_id, s.call_id, s.tool_name, s.function_name, s.risk, s.arguments, s.mcp_server_id, s.created_at`+from+`
		ORDER BY s.created_at, s.run_id, s.seq OFFSET ? LIMIT ?`, append(args, p.Offset, p.Limit)...).Scan(&rows).Error
	if err != nil {
		return nil, 0, pgdb.Translate(err, "run step")
	}
	out := make([]run.Approval, len(rows))
	for i, r := range rows {
		out[i] = run.Approval{RunID: r.RunID, CallID: r.CallID, Tool: r.ToolName, FunctionName: r.FunctionName, ServerID: r.MCPServerID,
			Risk: r.Risk, Arguments: r.Arguments, RequestedAt: r.CreatedAt}
	}
	return out, total, nil
}

// Call returns the run's tool step with the call id (the one waiting for a person, else the
// latest, should the model have reused the id), or memory.CallNotFound.
func (s *Runs) Call(ctx context.Context, runID, callID string) (run.Step, error) {
	var rows []stepModel
	err := s.db.WithContext(ctx).Raw(`SELECT * FROM run_steps WHERE run_id = ? AND kind = ? AND call_id = ?
		ORDER BY status = ? DESC, seq DESC LIMIT 1`, runID, run.ToolStep, callID, run.CallAwaitingApproval).Scan(&rows).Error
	if err != nil {
		return run.Step{}, pgdb.Translate(err, "run step")
	}
	if len(rows) == 0 {
		return run.Step{}, memory.CallNotFound()
	}
	return rows[0].toDomain(), nil
}

// Decide records a person's decision on a waiting tool call (see memory.Calls): under the run's
// lock, the step (st.RunID, st.Seq) takes st's status and result if it still waits and its run
// is active (memory.CallDecided otherwise), the memory entry and the audit entry are written,
// and a run AwaitingApproval whose last waiting call this was is queued again: Queued, its job
// Pending with a wake-up on the outbox (as Enqueue does), the claim that follows counted as a
// resume, not a retry.
func (s *Runs) Decide(ctx context.Context, st run.Step, e memory.Entry, v memory.Vector, a audit.Entry) (out run.Run, version int64, err error) {
	err = pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var m runModel
		if err := takeRun(tx.Clauses(clause.Locking{Strength: "UPDATE"}), st.RunID, &m); err != nil {
			return err
		}
		out = m.toDomain()
		if !out.Status.Active() {
			return apperr.E(apperr.Conflict, "run_finished", "The run has already finished ("+string(out.Status)+"); its tool calls can no longer be decided.")
		}
		res := tx.Model(&stepModel{}).Where("run_id = ? AND seq = ? AND status = ?", st.RunID, st.Seq, run.CallAwaitingApproval).
			Updates(map[string]any{"status": st.Status, "result": st.Result})
		if res.Error != nil {
			return pgdb.Translate(res.Error, "run step")
		}
		if res.RowsAffected == 0 {
			var status string
			if err := tx.Model(&stepModel{}).Where("run_id = ? AND seq = ?", st.RunID, st.Seq).Pluck("status", &status).Error; err != nil {
				return pgdb.Translate(err, "run step")
			}
			return memory.CallDecided(status)
		}
		if version, err = createEntry(tx, e, v, a); err != nil {
			return err
		}
		if out.Status != run.AwaitingApproval {
			return nil
		}
		return s.resume(ctx, tx, &out)
	})
	return out, version, err
}

// resume queues again, inside tx, the run AwaitingApproval r when none of its calls waits for a
// person any more.
func (s *Runs) resume(ctx context.Context, tx *gorm.DB, r *run.Run) error {
	var waiting int64
	if err := tx.Model(&stepModel{}).Where("run_id = ? AND status = ?", r.ID, run.CallAwaitingApproval).Count(&waiting).Error; err != nil {
		return pgdb.Translate(err, "run step")
	}
	if waiting > 0 {
		return nil
	}
	now := time.Now().UTC()
	r.Status, r.Resumes, r.UpdatedAt = run.Queued, r.Resumes+1, now
	err := tx.Model(&runModel{ID: r.ID}).Updates(map[string]any{"status": string(r.Status), "resumes": r.Resumes, "updated_at": now}).Error
	if err != nil {
		return pgdb.Translate(err, "agent run")
	}
	var job jobModel
	res := tx.Raw(`UPDATE jobs SET status = ?, lease_owner = '', lease_until = NULL, updated_at = ? WHERE run_id = ? AND status = ? RETURNING *`,
		run.JobPending, now, r.ID, run.JobParked).Scan(&job)
	if res.Error != nil {
		return pgdb.Translate(res.Error, "job")
	}
	return wakeRun(ctx, tx, s.outbox, job.ID, *r)
}
