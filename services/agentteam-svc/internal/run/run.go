// Package run holds agent runs and the jobs that carry them to a worker: a run is queued with
// its job in one transaction, a worker claims the job with a lease, a run whose tool call needs a
// person waits AwaitingApproval with its job parked, and the run ends Completed, Failed or
// Cancelled.
package run

import (
	"slices"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Status is an agent run's state.
type Status string

// Run statuses.
const (
	Queued    Status = "Queued"
	Running   Status = "Running"
	Completed Status = "Completed"
	Failed    Status = "Failed"
	Cancelled Status = "Cancelled"
	// AwaitingApproval is a run paused until a person decides its waiting tool calls; its job
	// is parked: no worker, lease or slot holds it.
	AwaitingApproval Status = "AwaitingApproval"
)

// ActiveStatuses are the statuses of a run that may still change, for queries.
var ActiveStatuses = []string{string(Queued), string(Running), string(AwaitingApproval)}

// Active reports whether the run may still change (Queued, Running or AwaitingApproval); a run
// that is not active has ended (Completed, Failed or Cancelled), and its event stream ends with
// that status.
func (s Status) Active() bool { return slices.Contains(ActiveStatuses, string(s)) }

// SkippedServer is an MCP server a run could not use, and why.
type SkippedServer struct {
	ID     string
	Name   string
	Reason string
}

// Run is one execution of an AI seat's agent on a work item.
type Run struct {
	ID             string
	OrganizationID string
	TeamID         string
	SeatID         string
	WorkItemID     string
	AgentID        *string
	Status         Status
	ActionType     string
	ActionRisk     string
	Prompt         string
	Output         string
	Error          string
	ErrorCode      string
	Attempts       int
	// Resumes counts the claims that followed a person's decision on its tool calls; they are
	// not retries, so they do not count against the attempt limit.
	Resumes           int
	ConnectionID      *string
	PromptTokens      int
	CompletionTokens  int
	SkippedMCPServers []SkippedServer
	CreatedAt         time.Time
	StartedAt         *time.Time
	FinishedAt        *time.Time
	UpdatedAt         time.Time
}

// JobStatus is a job's state.
type JobStatus string

// Job statuses.
const (
	JobPending    JobStatus = "Pending"
	JobProcessing JobStatus = "Processing"
	// JobParked is the job of a run AwaitingApproval: neither claimable nor swept until a
	// decision puts it back Pending.
	JobParked JobStatus = "Parked"
	JobDone   JobStatus = "Done"
	JobFailed JobStatus = "Failed"
)

// JobKindAgentRun is the kind of the job that carries a run.
const JobKindAgentRun = "agent.run"

// NotFound is the 404 for an unknown run.
func NotFound() error { return apperr.E(apperr.NotFound, "run_not_found", "Run not found.") }

// Approval is a tool call waiting for a person's decision: its run, call id, MCP tool (and the
// function name the model called), server, risk, arguments as the model wrote them, and when it
// was recorded.
type Approval struct {
	RunID        string
	CallID       string
	Tool         string
	FunctionName string
	ServerID     *string
	Risk         string
	Arguments    string
	RequestedAt  time.Time
}

// StepKind tells a model call from a tool call.
type StepKind string

// Step kinds.
const (
	ModelStep StepKind = "Model"
	ToolStep  StepKind = "ToolCall"
)

// Tool call statuses of a step. A call is recorded Running before it is sent and gets its
// result after; a call the autonomy does not cover is recorded AwaitingApproval, then Approved
// (the worker makes it) or Rejected by a person; a call left Running by a worker that died is
// Unknown unless it is safe to send again.
const (
	CallSucceeded        = "Succeeded"
	CallFailed           = "Failed"
	CallRejected         = "Rejected"
	CallRunning          = "Running"
	CallAwaitingApproval = "AwaitingApproval"
	CallApproved         = "Approved"
	CallUnknown          = "Unknown"
)

// Answered reports whether a tool call's result, as the model reads it, is recorded.
func Answered(status string) bool {
	switch status {
	case CallSucceeded, CallFailed, CallRejected, CallUnknown:
		return true
	}
	return false
}

// ToolCall is one call a model asked for: its id, the function name and the arguments as the
// model wrote them.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Answer is what a model step answered: its text and the tool calls it asked for, kept so that
// a resumed run replays the conversation as the model saw it.
type Answer struct {
	Text      string     `json:"text"`
	ToolCalls []ToolCall `json:"toolCalls"`
}

// Step is one entry of a run's transcript, in the order made (Seq from 1): a model call (its
// connection, tokens, whether it asked for tools) or a tool call (its call id, MCP server,
// tool, function name, arguments, risk, status and result text as sent to the model). A step
// holds no MCP header, model key or other secret.
type Step struct {
	RunID            string
	Seq              int
	Kind             StepKind
	ConnectionID     *string
	PromptTokens     int
	CompletionTokens int
	AskedForTools    bool
	// Answer is the model's answer (model steps that succeeded).
	Answer       *Answer
	CallID       string
	MCPServerID  *string
	ToolName     string
	FunctionName string
	Arguments    string
	Risk         string
	Status       string
	Result       string
	Duration     time.Duration
	CreatedAt    time.Time
}

// EventKind tells a run's status change from a step's record or update.
type EventKind string

// Event kinds.
const (
	StatusEvent EventKind = "status"
	StepEvent   EventKind = "step"
)

// Event is one entry of what happened to a run, in commit order (Seq from 1, per run): a change
// of its status (Status, with ErrorCode and Error as they were then) or a step recorded or
// updated (Step, as it is when read: its latest state).
type Event struct {
	Seq       int64
	Kind      EventKind
	Status    Status
	ErrorCode string
	Error     string
	Step      *Step
	CreatedAt time.Time
}

// EventPage is how many events one read of a run's events answers at most.
const EventPage = 100
