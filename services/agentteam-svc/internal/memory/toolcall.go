package memory

import (
	"context"
	"fmt"
	"strconv"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// NoteMax bounds the note a person gives with a decision on a tool call, in characters.
const NoteMax = 2000

// Calls records people's decisions on the tool calls that wait for one.
type Calls interface {
	// Call returns the run's tool step with the call id (the latest when the model reused
	// it), or CallNotFound.
	Call(ctx context.Context, runID, callID string) (run.Step, error)
	// Decide locks the run and, if the step (RunID, Seq) still waits for a person (Conflict
	// CallDecided otherwise), records its Status and Result, the entry with its vector and the
	// audit entry; when no call of the run waits any more and the run is AwaitingApproval, the
	// run is queued again (Queued, its job Pending) with a wake-up. All in one transaction; it
	// returns the run as stored and the team memory's new version.
	Decide(ctx context.Context, st run.Step, e Entry, v Vector, a audit.Entry) (run.Run, int64, error)
}

// CallNotFound is the 404 for a tool call a run does not have.
func CallNotFound() error {
	return apperr.E(apperr.NotFound, "tool_call_not_found", "Tool call not found.")
}

// CallDecided is the 409 for a tool call that no longer waits for a person.
func CallDecided(status string) error {
	return apperr.E(apperr.Conflict, "tool_call_not_waiting", "The tool call is no longer waiting for approval ("+status+").")
}

// ApproveCall lets the worker make a tool call that waits for a person (WorkTasks on the run's
// team): the step becomes Approved, and the worker makes the call once when the run resumes. It
// writes an Approval entry naming the tool, its arguments and the note, and the audit entry
// tool_call.approved. It returns run.NotFound, CallNotFound, Invalid for a bad note, Forbidden,
// Conflict when the call no longer waits and Unavailable when a remote embedder fails.
func (s *Service) ApproveCall(ctx context.Context, memberID, runID, callID string, note *string) (run.Run, error) {
	return s.decideCall(ctx, memberID, runID, callID, note, true)
}

// RejectCall refuses a tool call that waits for a person (WorkTasks on the run's team): the
// step becomes Rejected with a refusal quoting the note as its result, which the model reads
// when the run resumes. It writes a Correction entry and the audit entry tool_call.rejected,
// and returns what ApproveCall does.
func (s *Service) RejectCall(ctx context.Context, memberID, runID, callID string, note *string) (run.Run, error) {
	return s.decideCall(ctx, memberID, runID, callID, note, false)
}

// decideCall records a decision on a waiting call with its memory entry and audit entry.
func (s *Service) decideCall(ctx context.Context, memberID, runID, callID string, note *string, approve bool) (run.Run, error) {
	var c check.Checker
	c.Text("note", note, NoteMax)
	if err := c.First(); err != nil {
		return run.Run{}, err
	}
	r, err := s.runs.Run(ctx, runID)
	if err != nil {
		return run.Run{}, err
	}
	orgID, err := s.access.Require(ctx, memberID, access.WorkTasks, access.Team(r.TeamID))
	if err != nil {
		return run.Run{}, err
	}
	st, err := s.calls.Call(ctx, runID, callID)
	if err != nil {
		return run.Run{}, err
	}
	if st.Status != run.CallAwaitingApproval {
		return run.Run{}, CallDecided(st.Status)
	}
	text := ""
	if note != nil {
		text = *note
	}
	call := fmt.Sprintf("the tool call %s (MCP server %s, risk %s) with the arguments %s", strconv.Quote(st.ToolName), serverOf(st), st.Risk, strconv.Quote(st.Arguments))
	e := Entry{
		ID: s.newID(), OrganizationID: orgID, TeamID: r.TeamID, Kind: Approval, AgentID: r.AgentID, CreatedBy: memberID, CreatedAt: s.now(),
		Content: "A person approved " + call + noted(text),
	}
	action := "tool_call.approved"
	st.Status, st.Result = run.CallApproved, ""
	if !approve {
		e.Kind, e.Content, action = Correction, "A person rejected "+call+noted(text), "tool_call.rejected"
		st.Status, st.Result = run.CallRejected, "The call was not made: a person rejected it"+noted(text)
	}
	vecs, err := s.embedder.Embed(ctx, []string{e.Content})
	if err != nil {
		return run.Run{}, err
	}
	a := audit.New(orgID, memberID, action, "AgentRun", r.ID, "call "+callID+", tool "+st.ToolName)
	a.CreatedAt = e.CreatedAt
	out, version, err := s.calls.Decide(ctx, st, e, Vector{EntryID: e.ID, Embedder: s.embedder.ID(), Values: vecs[0]}, a)
	if err != nil {
		return run.Run{}, err
	}
	s.notifier.Changed(ctx, e.TeamID, version)
	return out, nil
}

// serverOf names the step's MCP server by id.
func serverOf(st run.Step) string {
	if st.MCPServerID == nil {
		return "unknown"
	}
	return *st.MCPServerID
}

// noted is the sentence quoting a decision's note, or nothing without one.
func noted(note string) string {
	if check.Blank(note) {
		return "."
	}
	return ". Their note: " + strconv.Quote(note)
}
