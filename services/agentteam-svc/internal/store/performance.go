package store

import (
	"context"
	"time"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
)

// performanceSQL computes every assignee's figures in one statement: the organization's (or
// team's) tasks, each task's InProgress periods from consecutive transitions (the open one
// ends at @now), its first InProgress and last Done, then sums per assignee. The unassigned
// tasks form the row with a null assignee.
const performanceSQL = `
WITH items AS (
	SELECT w.id, w.status, w.assignee_kind, w.assignee_id
	FROM work_items w JOIN teams t ON t.id = w.team_id
	WHERE t.organization_id = @org AND (CAST(@team AS uuid) IS NULL OR w.team_id = CAST(@team AS uuid))
), periods AS (
	SELECT tr.work_item_id, tr.to_status, tr.created_at,
		lead(tr.created_at) OVER (PARTITION BY tr.work_item_id ORDER BY tr.created_at, tr.id) AS ended_at
	FROM work_item_transitions tr JOIN items i ON i.id = tr.work_item_id
), per_item AS (
	SELECT i.id, i.status, i.assignee_kind, i.assignee_id,
		COALESCE(sum(extract(epoch FROM COALESCE(p.ended_at, @now) - p.created_at)) FILTER (WHERE p.to_status = 'InProgress'), 0) AS worked_seconds,
		min(p.created_at) FILTER (WHERE p.to_status = 'InProgress') AS started_at,
		max(p.created_at) FILTER (WHERE p.to_status = 'Done') AS done_at
	FROM items i LEFT JOIN periods p ON p.work_item_id = i.id
	GROUP BY i.id, i.status, i.assignee_kind, i.assignee_id
)
SELECT assignee_kind, assignee_id::text AS assignee_id,
	count(*) FILTER (WHERE status = 'Backlog') AS backlog,
	count(*) FILTER (WHERE status = 'InProgress') AS in_progress,
	count(*) FILTER (WHERE status = 'InReview') AS in_review,
	count(*) FILTER (WHERE status = 'Done') AS done,
	sum(worked_seconds) / 3600.0 AS worked_hours,
	avg(extract(epoch FROM done_at - started_at)) FILTER (WHERE status = 'Done' AND started_at < done_at) / 3600.0 AS average_cycle_hours
FROM per_item
GROUP BY assignee_kind, assignee_id
ORDER BY assignee_kind NULLS FIRST, assignee_id
LIMIT @limit`

// Performance computes the figures per assignee in one query (see performanceSQL); teamID nil
// covers the whole organization.
func (s *Board) Performance(ctx context.Context, organizationID string, teamID *string, now time.Time, limit int) ([]board.AssigneeFigures, error) {
	var rows []struct {
		AssigneeKind, AssigneeID            *string
		Backlog, InProgress, InReview, Done int
		WorkedHours                         float64
		AverageCycleHours                   *float64
	}
	err := s.db.WithContext(ctx).Raw(performanceSQL, map[string]any{"org": organizationID, "team": teamID, "now": now, "limit": limit}).
		Scan(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "performance")
	}
	out := make([]board.AssigneeFigures, len(rows))
	for i, r := range rows {
		out[i] = board.AssigneeFigures(r)
	}
	return out, nil
}
