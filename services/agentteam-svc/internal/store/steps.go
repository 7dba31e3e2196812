package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// stepModel is a run_steps row.
type stepModel struct {
	RunID            string  `gorm:"column:run_id"`
	Seq              int     `gorm:"column:seq"`
	Kind             string  `gorm:"column:kind"`
	ConnectionID     *string `gorm:"column:connection_id"`
	PromptTokens     int     `gorm:"column:prompt_tokens"`
	CompletionTokens int     `gorm:"column:completion_tokens"`
	AskedForTools    bool    `gorm:"column:asked_for_tools"`
	Answer           *string `gorm:"column:answer"`
	CallID           string  `gorm:"column:call_id"`
	MCPServerID      *string `gorm:"column:mcp_server_id"`
	ToolName         string  `gorm:"column:tool_name"`
	FunctionName     string  `gorm:"column:function_name"`
	Arguments        string  `gorm:"column:arguments"`
	Risk             string  `gorm:"column:risk"`
	Status           string  `gorm:"column:status"`
	Result           string  `gorm:"column:result"`
	DurationMs       int64   `gorm:"column:duration_ms"`
	CreatedAt        time.Time
}

// TableName is the transcript's table.
func (stepModel) TableName() string { return "run_steps" }

// toDomain maps the row; an answer that does not decode (the column is written only by AddStep)
// is left out, so the step is not replayed.
func (m stepModel) toDomain() run.Step {
	var answer *run.Answer
	if m.Answer != nil {
		answer = &run.Answer{}
		if json.Unmarshal([]byte(*m.Answer), answer) != nil {
			answer = nil
		}
	}
	return run.Step{
		RunID: m.RunID, Seq: m.Seq, Kind: run.StepKind(m.Kind), ConnectionID: m.ConnectionID, PromptTokens: m.PromptTokens,
		CompletionTokens: m.CompletionTokens, AskedForTools: m.AskedForTools, Answer: answer, CallID: m.CallID, MCPServerID: m.MCPServerID,
		ToolName: m.ToolName, FunctionName: m.FunctionName, Arguments: m.Arguments, Risk: m.Risk, Status: m.Status,
		Result: m.Result, Duration: time.Duration(m.DurationMs) * time.Millisecond, CreatedAt: m.CreatedAt,
	}
}

// AddStep appends st to its run's transcript as the next step, if l still holds the run's job,
// and returns its seq; jobs.ErrLeaseLost otherwise.
func (s *RunWork) AddStep(ctx context.Context, l jobs.Lease, st run.Step) (int, error) {
	var answer *string
	if st.Answer != nil {
		raw, err := json.Marshal(st.Answer)
		if err != nil {
			return 0, fmt.Errorf("store: encode a model answer: %w", err)
		}
		answer = new(string(raw))
	}
	holds, args := runJobs.Holds(l)
	// A new row: nothing else holds it, so its event trigger taking the run's row after it
	// cannot deadlock with Cancel or a decision, which lock the run's row first.
	var seq []int
	err := s.db.WithContext(ctx).Raw(`INSERT INTO run_steps (run_id, seq, kind, connection_id, prompt_tokens, completion_tokens,
			asked_for_tools, answer, call_id, mcp_server_id, tool_name, function_name, arguments, risk, status, result, duration_ms)
		SELECT ?, COALESCE(max(seq), 0) + 1, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM run_steps WHERE run_id = ?
		HAVING `+holds+` RETURNING seq`,
		append([]any{st.RunID, st.Kind, st.ConnectionID, st.PromptTokens, st.CompletionTokens, st.AskedForTools, answer, st.CallID, st.MCPServerID,
			st.ToolName, st.FunctionName, st.Arguments, st.Risk, st.Status, st.Result, st.Duration.Milliseconds(), st.RunID}, args...)...).Scan(&seq).Error
	if err != nil {
		return 0, pgdb.Translate(err, "run step")
	}
	if len(seq) == 0 {
		return 0, jobs.ErrLeaseLost
	}
	return seq[0], nil
}

// UpdateStep records the status, result and duration of the step (st.RunID, st.Seq) if l still
// holds the run's job; jobs.ErrLeaseLost otherwise.
func (s *RunWork) UpdateStep(ctx context.Context, l jobs.Lease, st run.Step) error {
	holds, args := runJobs.Holds(l)
	// The run's row is locked first (the subquery runs before the step's row is read): the
	// step's event trigger locks it after the step, and Cancel and the decisions lock it before
	// the steps they end, so one order is kept and neither waits on the other in a cycle.
	res := s.db.WithContext(ctx).Exec(`UPDATE run_steps SET status = ?, result = ?, duration_ms = ?, mcp_server_id = ?, tool_name = ?
		WHERE run_id = (SELECT id FROM agent_runs WHERE id = ? FOR UPDATE) AND seq = ? AND `+holds,
		append([]any{st.Status, st.Result, st.Duration.Milliseconds(), st.MCPServerID, st.ToolName, st.RunID, st.Seq}, args...)...)
	if res.Error != nil {
		return pgdb.Translate(res.Error, "run step")
	}
	if res.RowsAffected == 0 {
		return jobs.ErrLeaseLost
	}
	return nil
}

// Steps returns the run's whole transcript in order, for the worker that resumes it (the run's
// limits bound its length).
func (s *RunWork) Steps(ctx context.Context, runID string) ([]run.Step, error) {
	var rows []stepModel
	if err := s.db.WithContext(ctx).Raw(`SELECT * FROM run_steps WHERE run_id = ? ORDER BY seq`, runID).Scan(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "run step")
	}
	return mapAll(rows, stepModel.toDomain), nil
}

// Steps answers a page of the run's transcript in order.
func (s *Runs) Steps(ctx context.Context, runID string, p org.Page) ([]run.Step, error) {
	var rows []stepModel
	err := s.db.WithContext(ctx).Raw(`SELECT * FROM run_steps WHERE run_id = ? ORDER BY seq OFFSET ? LIMIT ?`, runID, p.Offset, p.Limit).
		Scan(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "run step")
	}
	return mapAll(rows, stepModel.toDomain), nil
}

// eventModel is a run_events row (migration 00070).
type eventModel struct {
	Seq       int64
	Kind      string
	Status    string
	ErrorCode string
	Error     string
	StepSeq   *int
	CreatedAt time.Time
}

// Events answers up to limit of the run's events after seq after, in order, each step event
// with its step as it is now.
func (s *Runs) Events(ctx context.Context, runID string, after int64, limit int) ([]run.Event, error) {
	db := s.db.WithContext(ctx)
	var rows []eventModel
	err := db.Raw(`SELECT seq, kind, status, error_code, error, step_seq, created_at FROM run_events
		WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`, runID, after, limit).Scan(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "run event")
	}
	var seqs []int
	for _, e := range rows {
		if e.StepSeq != nil {
			seqs = append(seqs, *e.StepSeq)
		}
	}
	steps := map[int]run.Step{}
	if len(seqs) > 0 {
		var found []stepModel
		if err := db.Raw(`SELECT * FROM run_steps WHERE run_id = ? AND seq IN ?`, runID, seqs).Scan(&found).Error; err != nil {
			return nil, pgdb.Translate(err, "run step")
		}
		for _, m := range found {
			steps[m.Seq] = m.toDomain()
		}
	}
	out := make([]run.Event, len(rows))
	for i, e := range rows {
		out[i] = run.Event{Seq: e.Seq, Kind: run.EventKind(e.Kind), Status: run.Status(e.Status), ErrorCode: e.ErrorCode, Error: e.Error,
			CreatedAt: e.CreatedAt}
		if e.StepSeq != nil {
			if st, ok := steps[*e.StepSeq]; ok {
				out[i].Step = &st
			}
		}
	}
	return out, nil
}
