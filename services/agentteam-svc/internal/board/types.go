package board

import (
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// Statuses of a work item, which are also the board's columns.
const (
	StatusBacklog    = "Backlog"
	StatusInProgress = "InProgress"
	StatusInReview   = "InReview"
	StatusDone       = "Done"
)

// Columns are the board's columns in their display order.
var Columns = [...]string{StatusBacklog, StatusInProgress, StatusInReview, StatusDone}

// ValidStatus reports whether s is one of the columns.
func ValidStatus(s string) bool {
	for _, c := range Columns {
		if c == s {
			return true
		}
	}
	return false
}

// Work item types with a meaning to the platform; any other type is free text.
const (
	TypeTask   = "Task"
	TypeTest   = "Test"
	TypeReview = "Review"
)

// Assignee kinds.
const (
	AssigneeMember = "Member"
	AssigneeAgent  = "Agent"
)

// WorkItem is a task on a team's board.
type WorkItem struct {
	ID           string
	TeamID       string
	Title        string
	Description  string
	Type         string
	Status       string
	AssigneeKind *string
	AssigneeID   *string
	ParentID     *string
	// HandoffOf names the finished task when this item is the QA task its handoff created.
	HandoffOf *string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Transition records one real status change of a work item.
type Transition struct {
	ID         string
	WorkItemID string
	TeamID     string
	From       string
	To         string
	// MemberID is the acting member; empty for a system change.
	MemberID  string
	CreatedAt time.Time
}

// Product kinds.
const (
	KindProduct = "Product"
	KindService = "Service"
)

// Division groups products inside an organization.
type Division struct {
	ID             string
	OrganizationID string
	Name           string
	CreatedAt      time.Time
}

// Product is a product or service of an organization; Identity is its product brief.
type Product struct {
	ID             string
	OrganizationID string
	DivisionID     *string
	Name           string
	Kind           string
	Identity       string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Team owns a board and a set of seats, optionally for a product.
type Team struct {
	ID             string
	OrganizationID string
	Name           string
	ProductID      *string
	CreatedAt      time.Time
}

// Move is what moving a task changes, decided by the board service on the locked task.
type Move struct {
	OrganizationID string
	// Item is the task after the move.
	Item WorkItem
	// Transition is the status change to record; nil when the status did not change.
	Transition *Transition
	Audit      audit.Entry
	// Handoff is the QA handoff to attempt; nil when the move cannot hand off.
	Handoff *Handoff
}

// Handoff is the QA task and the run a move to Done creates. The store creates them only when
// the finished task has never handed off before.
type Handoff struct {
	Task  WorkItem
	Run   run.Run
	Audit audit.Entry
}

// Column is one board column: a page of its tasks in creation order and how many it holds.
type Column struct {
	Status string
	Total  int
	Tasks  []WorkItem
}

// TaskNotFound is the spec's 404 for an unknown task.
func TaskNotFound() error { return apperr.E(apperr.NotFound, "task_not_found", "Task not found.") }
