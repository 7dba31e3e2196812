// Package board holds the work board: the organization's structure (divisions, products,
// teams), tasks and their columns, moves with their transitions and the automatic QA handoff,
// assignment, performance figures and the audit log.
package board

import (
	"context"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/seat"
)

// Store persists work items; every mutation writes its audit entry in the same transaction.
type Store interface {
	AssignedTo(ctx context.Context, kind, assigneeID string, limit int) ([]WorkItem, error)
	CreateTask(ctx context.Context, w WorkItem, e audit.Entry) error
	// Task returns TaskNotFound for an unknown id.
	Task(ctx context.Context, id string) (WorkItem, error)
	// Columns returns, for each status, its task count and the page [offset, offset+limit) of
	// its tasks in creation order.
	Columns(ctx context.Context, teamID string, statuses []string, offset, limit int) ([]Column, error)
	// MoveTask locks the task, plans the move with decide and stores it; handedOff reports
	// whether the planned handoff happened (the finished task had none before).
	MoveTask(ctx context.Context, id string, decide func(WorkItem) (Move, error)) (item WorkItem, handedOff bool, err error)
	// UpdateTask locks the task, lets change modify it and stores it with the returned entry.
	UpdateTask(ctx context.Context, id string, change func(*WorkItem) (audit.Entry, error)) (WorkItem, error)
	Performance(ctx context.Context, organizationID string, teamID *string, now time.Time, limit int) ([]AssigneeFigures, error)
	AuditLog(ctx context.Context, organizationID string, p org.Page) ([]audit.Entry, error)
}

// Seats answers the team's AI seats, where the QA seat is found.
type Seats interface {
	AISeats(ctx context.Context, teamID string) ([]seat.Seat, error)
}

// Deps are what a Service needs.
type Deps struct {
	Store     Store
	Structure StructureStore
	Versions  BoardVersions
	Orgs      Organizations
	Seats     Seats
	Access    *access.Checker
	NewID     func() string
	Now       func() time.Time
}

// Service implements the board's rules.
type Service struct{ Deps }

// NewService returns a Service.
func NewService(d Deps) *Service { return &Service{Deps: d} }

// CartableLimit caps the cartable: a member's open work fits comfortably, a runaway list does not.
const CartableLimit = 500

// Cartable lists the work items assigned to the member, most recently updated first.
func (s *Service) Cartable(ctx context.Context, memberID string) ([]WorkItem, error) {
	return s.Store.AssignedTo(ctx, AssigneeMember, memberID, CartableLimit)
}

// NewTask is a task as a client asks for it.
type NewTask struct {
	TeamID, Title, Description, Type string
}

// CreateTask puts a task in the team's Backlog (WorkTasks). It returns Invalid for a blank or
// oversized field, TeamNotFound and Forbidden. A blank type is Task.
func (s *Service) CreateTask(ctx context.Context, memberID string, t NewTask) (WorkItem, error) {
	if check.Blank(t.Type) {
		t.Type = TypeTask
	}
	var c check.Checker
	c.AddIf(check.Blank(t.Title), "Title", "is required")
	c.Text("title", &t.Title, check.TitleMax)
	c.Text("description", &t.Description, check.TextMax)
	c.Text("type", &t.Type, check.NameMax)
	if err := c.First(); err != nil {
		return WorkItem{}, err
	}
	orgID, err := s.Access.Require(ctx, memberID, access.WorkTasks, access.Team(t.TeamID))
	if err != nil {
		return WorkItem{}, err
	}
	now := s.Now()
	w := WorkItem{
		ID: s.NewID(), TeamID: t.TeamID, Title: t.Title, Description: t.Description, Type: strings.TrimSpace(t.Type),
		Status: StatusBacklog, CreatedAt: now, UpdatedAt: now,
	}
	return w, s.Store.CreateTask(ctx, w, audit.New(orgID, memberID, "task.created", "WorkItem", w.ID, w.Title))
}

// Board answers the team's columns in order, each with one page of its tasks (ViewBoard). It
// returns TeamNotFound and Forbidden.
func (s *Service) Board(ctx context.Context, memberID, teamID string, p org.Page) ([]Column, error) {
	if _, err := s.Access.Require(ctx, memberID, access.ViewBoard, access.Team(teamID)); err != nil {
		return nil, err
	}
	return s.Store.Columns(ctx, teamID, Columns[:], p.Offset, p.Limit)
}

// BoardVersion answers the team's board version, which changes with every write to its tasks
// (ViewBoard). The version and the membership facts come from one lookup, as a board read is
// the hottest path; the decision is access.Allow, the one Require makes. It returns
// TeamNotFound and Forbidden.
func (s *Service) BoardVersion(ctx context.Context, memberID, teamID string) (int64, error) {
	version, role, ok, err := s.Versions.BoardVersion(ctx, teamID, memberID)
	if err != nil {
		return 0, err
	}
	return version, access.Allow(role, ok, access.ViewBoard)
}

// Move moves the task to status (WorkTasks on its team). A real change records a transition;
// a move to Done hands off to the team's QA seat unless the task is a Test or Review or has
// handed off before. It returns Invalid for an unknown status, TaskNotFound and Forbidden.
func (s *Service) Move(ctx context.Context, memberID, taskID, status string) (WorkItem, error) {
	if !ValidStatus(status) {
		return WorkItem{}, apperr.Invalidf("status must be Backlog, InProgress, InReview or Done.")
	}
	task, err := s.Store.Task(ctx, taskID)
	if err != nil {
		return WorkItem{}, err
	}
	orgID, err := s.Access.Require(ctx, memberID, access.WorkTasks, access.Team(task.TeamID))
	if err != nil {
		return WorkItem{}, err
	}
	var qa *seat.Seat
	if status == StatusDone {
		if qa, err = s.qaSeat(ctx, task.TeamID); err != nil {
			return WorkItem{}, err
		}
	}
	now := s.Now()
	item, _, err := s.Store.MoveTask(ctx, taskID, func(w WorkItem) (Move, error) {
		mv := Move{OrganizationID: orgID, Item: w, Audit: audit.New(orgID, memberID, "task.moved", "WorkItem", w.ID, w.Status+" -> "+status)}
		if w.Status != status {
			mv.Transition = &Transition{ID: s.NewID(), WorkItemID: w.ID, TeamID: w.TeamID, From: w.Status, To: status, MemberID: memberID, CreatedAt: now}
			mv.Item.Status, mv.Item.UpdatedAt = status, now
		}
		if qa != nil && handsOff(w) {
			mv.Handoff = s.handoff(orgID, memberID, w, *qa, now)
		}
		return mv, nil
	})
	return item, err
}

// handsOff reports whether finishing w may hand it off: Test and Review tasks never do (which
// also keeps a QA task, a Review, from handing off again).
func handsOff(w WorkItem) bool {
	return !strings.EqualFold(w.Type, TypeTest) && !strings.EqualFold(w.Type, TypeReview)
}

// QARole is the role name of a team's QA seat, compared case-insensitively.
const QARole = "QA"

// qaSeat is the team's oldest AI seat named QA that has an agent, or nil.
func (s *Service) qaSeat(ctx context.Context, teamID string) (*seat.Seat, error) {
	seats, err := s.Seats.AISeats(ctx, teamID)
	if err != nil {
		return nil, err
	}
	for _, st := range seats {
		if strings.EqualFold(strings.TrimSpace(st.RoleName), QARole) && st.AgentID != nil {
			return &st, nil
		}
	}
	return nil, nil
}

// handoff plans the QA task (a Review of the finished task, assigned to the QA seat's agent) and
// the run of the QA seat on it.
func (s *Service) handoff(orgID, memberID string, done WorkItem, qa seat.Seat, now time.Time) *Handoff {
	kind, finished := AssigneeAgent, done.ID
	task := WorkItem{
		ID: s.NewID(), TeamID: done.TeamID, Title: truncate("QA: "+done.Title, check.TitleMax),
		Description: "Review the finished task " + done.ID + ".", Type: TypeReview, Status: StatusBacklog,
		AssigneeKind: &kind, AssigneeID: qa.AgentID, ParentID: &finished, HandoffOf: &finished, CreatedAt: now, UpdatedAt: now,
	}
	r := run.Run{
		ID: s.NewID(), OrganizationID: orgID, TeamID: done.TeamID, SeatID: qa.ID, WorkItemID: task.ID, AgentID: qa.AgentID,
		ActionType: TypeReview,
	}
	return &Handoff{Task: task, Run: r, Audit: audit.New(orgID, memberID, "handoff.triggered", "WorkItem", done.ID, "QA task "+task.ID+" for seat "+qa.ID)}
}

func truncate(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max])
}

// Assign assigns the task to a member of its team's organization (WorkTasks). It returns
// TaskNotFound, Forbidden and Invalid when the member does not belong to the organization.
func (s *Service) Assign(ctx context.Context, memberID, taskID, assignee string) (WorkItem, error) {
	task, err := s.Store.Task(ctx, taskID)
	if err != nil {
		return WorkItem{}, err
	}
	orgID, err := s.Access.Require(ctx, memberID, access.WorkTasks, access.Team(task.TeamID))
	if err != nil {
		return WorkItem{}, err
	}
	if _, ok, err := s.Access.RoleOf(ctx, orgID, assignee); err != nil {
		return WorkItem{}, err
	} else if !ok {
		return WorkItem{}, apperr.Invalidf("The member does not belong to the team's organization.")
	}
	now := s.Now()
	return s.Store.UpdateTask(ctx, taskID, func(w *WorkItem) (audit.Entry, error) {
		kind := AssigneeMember
		w.AssigneeKind, w.AssigneeID, w.UpdatedAt = &kind, &assignee, now
		return audit.New(orgID, memberID, "task.assigned", "WorkItem", w.ID, assignee), nil
	})
}

// AuditLog lists the organization's audit records, newest first (owner-level).
func (s *Service) AuditLog(ctx context.Context, memberID, organizationID string, p org.Page) ([]audit.Entry, error) {
	if _, err := s.Access.Require(ctx, memberID, access.OwnerLevel, access.Org(organizationID)); err != nil {
		return nil, err
	}
	return s.Store.AuditLog(ctx, organizationID, p)
}
