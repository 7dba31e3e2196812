package store

import (
	"context"
	"sort"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
)

// Analytics computes the scope's figures with four grouped queries (runs per agent, reviews per
// agent, reviews per agent and week, tasks done), never a query per agent. Reviews are the
// approval and correction entries made by approving a run, deleted ones included.
func (s *Memory) Analytics(ctx context.Context, sc memory.Scope) (memory.Analytics, error) {
	a := memory.Analytics{Scope: sc}
	agents := map[string]*memory.AgentFigures{}
	agent := func(id *string) *memory.AgentFigures {
		if id == nil {
			return nil
		}
		f, ok := agents[*id]
		if !ok {
			f = &memory.AgentFigures{AgentID: *id}
			agents[*id] = f
		}
		return f
	}

	var runs []struct {
		AgentID                 *string
		Runs, Completed, Failed int
		Tokens                  int64
	}
	err := s.scoped(ctx, "agent_runs", sc).
		Select(`agent_id, count(*) AS runs, count(*) FILTER (WHERE status = 'Completed') AS completed,
			count(*) FILTER (WHERE status = 'Failed') AS failed,
			COALESCE(sum(prompt_tokens + completion_tokens), 0) AS tokens`).
		Group("agent_id").Scan(&runs).Error
	if err != nil {
		return a, pgdb.Translate(err, "analytics")
	}
	for _, r := range runs {
		a.TokensUsed += r.Tokens
		if f := agent(r.AgentID); f != nil {
			f.Runs, f.Completed, f.Failed, f.TokensUsed = r.Runs, r.Completed, r.Failed, r.Tokens
		}
	}

	var reviews []struct {
		AgentID *string
		Week    *time.Time
		memory.Reviews
	}
	err = s.reviews(ctx, sc).Select("agent_id, NULL::timestamptz AS week, " + reviewFigures).Group("agent_id").Scan(&reviews).Error
	if err != nil {
		return a, pgdb.Translate(err, "analytics")
	}
	for _, r := range reviews {
		a.Approvals += r.Approvals
		a.Corrections += r.Corrections
		a.EditDistanceSum += r.EditDistanceSum
		if f := agent(r.AgentID); f != nil {
			f.Reviews = r.Reviews
		}
	}

	reviews = nil
	err = s.reviews(ctx, sc).Where("created_at >= ? AND agent_id IS NOT NULL", sc.TrendSince).
		Select("agent_id, date_trunc('week', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS week, " + reviewFigures).
		Group("agent_id, week").Order("agent_id, week").Scan(&reviews).Error
	if err != nil {
		return a, pgdb.Translate(err, "analytics")
	}
	for _, r := range reviews {
		f := agent(r.AgentID)
		f.Trend = append(f.Trend, memory.Week{Start: r.Week.UTC(), Reviews: r.Reviews})
	}

	var done int64
	q := s.db.WithContext(ctx).Table("work_items w").Joins("JOIN teams t ON t.id = w.team_id").
		Where("t.organization_id = ? AND w.status = 'Done'", sc.OrganizationID)
	if sc.TeamID != "" {
		q = q.Where("w.team_id = ?", sc.TeamID)
	}
	if err := q.Count(&done).Error; err != nil {
		return a, pgdb.Translate(err, "analytics")
	}
	a.TasksDone = int(done)

	for _, f := range agents {
		a.Agents = append(a.Agents, *f)
	}
	sort.Slice(a.Agents, func(i, j int) bool { return a.Agents[i].AgentID < a.Agents[j].AgentID })
	return a, nil
}

// reviewFigures are the aggregate columns of memory.Reviews.
const reviewFigures = `count(*) FILTER (WHERE kind = 'Approval') AS approvals,
	count(*) FILTER (WHERE kind = 'Correction') AS corrections,
	COALESCE(sum(edit_distance), 0) AS edit_distance_sum`

// scoped selects the table's rows of the scope's organization and team.
func (s *Memory) scoped(ctx context.Context, table string, sc memory.Scope) *gorm.DB {
	q := s.db.WithContext(ctx).Table(table).Where("organization_id = ?", sc.OrganizationID)
	if sc.TeamID != "" {
		q = q.Where("team_id = ?", sc.TeamID)
	}
	return q
}

// reviews selects the scope's run reviews.
func (s *Memory) reviews(ctx context.Context, sc memory.Scope) *gorm.DB {
	return s.scoped(ctx, "memory_entries", sc).Where("run_id IS NOT NULL AND kind IN ('Approval', 'Correction')")
}
