package run

import (
	"context"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/seat"
)

// Store persists runs and their jobs.
type Store interface {
	// Enqueue stores r Queued with its Pending job and wake-up, and e, in one transaction;
	// created is false when the work item already has an active run for the seat, which is
	// returned instead.
	Enqueue(ctx context.Context, r Run, e audit.Entry) (queued Run, created bool, err error)
	// Run returns NotFound for an unknown id.
	Run(ctx context.Context, id string) (Run, error)
	// RunsOf lists the runs whose column ("work_item_id" or "seat_id") is id, newest first.
	RunsOf(ctx context.Context, column, id string, p org.Page) ([]Run, error)
	// Cancel locks the run, lets cancel change it and stores it with its job finished.
	Cancel(ctx context.Context, id string, cancel func(*Run) (audit.Entry, error)) (Run, error)
	// Steps answers a page of the run's transcript in order.
	Steps(ctx context.Context, runID string, p org.Page) ([]Step, error)
	// Approvals answers a page of the tool calls waiting for a person in the organization's
	// active runs, oldest first, and how many there are in all.
	Approvals(ctx context.Context, organizationID string, p org.Page) ([]Approval, int, error)
	// Events answers up to limit of the run's events after seq after, in order.
	Events(ctx context.Context, runID string, after int64, limit int) ([]Event, error)
}

// Seats answers seats.
type Seats interface {
	// Seat returns seat.NotFound for an unknown id.
	Seat(ctx context.Context, id string) (seat.Seat, error)
}

// Tasks answers which team a work item is on.
type Tasks interface {
	// TaskTeam returns the task's team, or a NotFound "Task not found." error.
	TaskTeam(ctx context.Context, id string) (string, error)
}

// Service queues, reads and cancels agent runs.
type Service struct {
	store  Store
	seats  Seats
	tasks  Tasks
	access *access.Checker
	newID  func() string
	now    func() time.Time
}

// NewService returns a Service.
func NewService(store Store, seats Seats, tasks Tasks, checker *access.Checker, newID func() string, now func() time.Time) *Service {
	return &Service{store: store, seats: seats, tasks: tasks, access: checker, newID: newID, now: now}
}

// Create queues a run of the seat on the work item (WorkTasks on the seat's team), or answers
// the run already active for them. It returns seat.NotFound, the task's NotFound, Forbidden, and
// Invalid when the work item is on another team.
func (s *Service) Create(ctx context.Context, memberID, seatID, workItemID string) (Run, error) {
	st, err := s.seats.Seat(ctx, seatID)
	if err != nil {
		return Run{}, err
	}
	taskTeam, err := s.tasks.TaskTeam(ctx, workItemID)
	if err != nil {
		return Run{}, err
	}
	orgID, err := s.access.Require(ctx, memberID, access.WorkTasks, access.Team(st.TeamID))
	if err != nil {
		return Run{}, err
	}
	if taskTeam != st.TeamID {
		return Run{}, apperr.Invalidf("The work item is not on the seat's team.")
	}
	r := Run{ID: s.newID(), OrganizationID: orgID, TeamID: st.TeamID, SeatID: st.ID, WorkItemID: workItemID, AgentID: st.AgentID}
	queued, _, err := s.store.Enqueue(ctx, r, audit.New(orgID, memberID, "run.queued", "AgentRun", r.ID, "seat "+st.ID+", work item "+workItemID))
	return queued, err
}

// Get answers the run (ViewBoard on its team). It returns NotFound and Forbidden.
func (s *Service) Get(ctx context.Context, memberID, id string) (Run, error) {
	r, err := s.store.Run(ctx, id)
	if err != nil {
		return Run{}, err
	}
	_, err = s.access.Require(ctx, memberID, access.ViewBoard, access.Team(r.TeamID))
	return r, err
}

// Steps answers a page of the run's transcript, in order, to whoever may read the run
// (ViewBoard on its team). It returns NotFound and Forbidden.
func (s *Service) Steps(ctx context.Context, memberID, id string, p org.Page) ([]Step, error) {
	if _, err := s.Get(ctx, memberID, id); err != nil {
		return nil, err
	}
	return s.store.Steps(ctx, id, p)
}

// Approvals answers a page of the tool calls waiting for a person in the organization's runs
// that the member may decide (WorkTasks on the run's team; roles are organization-wide, so
// every team of the organization or none), oldest first, with how many wait in all. It returns
// Invalid without an organization and Forbidden for a member without the capability there.
func (s *Service) Approvals(ctx context.Context, memberID, organizationID string, p org.Page) ([]Approval, int, error) {
	if organizationID == "" {
		return nil, 0, check.Invalid("organizationId", "is required")
	}
	if _, err := s.access.Require(ctx, memberID, access.WorkTasks, access.Org(organizationID)); err != nil {
		return nil, 0, err
	}
	return s.store.Approvals(ctx, organizationID, p)
}

// EventReader answers the events of one run after seq after, in order, at most EventPage of
// them.
type EventReader func(ctx context.Context, after int64) ([]Event, error)

// Events lets whoever may read the run (ViewBoard on its team) read its events: it answers the
// run as it is now and the reader of its events. It returns NotFound and Forbidden.
func (s *Service) Events(ctx context.Context, memberID, id string) (Run, EventReader, error) {
	r, err := s.Get(ctx, memberID, id)
	if err != nil {
		return Run{}, nil, err
	}
	return r, func(ctx context.Context, after int64) ([]Event, error) {
		return s.store.Events(ctx, id, after, EventPage)
	}, nil
}

// List lists the runs of a work item or of a seat, exactly one of which is given, newest first
// (ViewBoard on its team). It returns Invalid, the item's or seat's NotFound and Forbidden.
func (s *Service) List(ctx context.Context, memberID string, workItemID, seatID *string, p org.Page) ([]Run, error) {
	if (workItemID == nil) == (seatID == nil) {
		return nil, apperr.Invalidf("Give exactly one of workItemId and seatId.")
	}
	column, id, teamID := "work_item_id", "", ""
	var err error
	if workItemID != nil {
		id = *workItemID
		teamID, err = s.tasks.TaskTeam(ctx, id)
	} else {
		var st seat.Seat
		column, id = "seat_id", *seatID
		st, err = s.seats.Seat(ctx, id)
		teamID = st.TeamID
	}
	if err != nil {
		return nil, err
	}
	if _, err := s.access.Require(ctx, memberID, access.ViewBoard, access.Team(teamID)); err != nil {
		return nil, err
	}
	return s.store.RunsOf(ctx, column, id, p)
}

// Cancel stops an active run, AwaitingApproval included (WorkTasks on its team): it becomes
// Cancelled and its job is finished, so no worker runs it again, and the calls waiting for a
// person end Rejected. It returns NotFound, Forbidden and Conflict for a run that already ended.
func (s *Service) Cancel(ctx context.Context, memberID, id string) (Run, error) {
	r, err := s.store.Run(ctx, id)
	if err != nil {
		return Run{}, err
	}
	orgID, err := s.access.Require(ctx, memberID, access.WorkTasks, access.Team(r.TeamID))
	if err != nil {
		return Run{}, err
	}
	now := s.now()
	return s.store.Cancel(ctx, id, func(r *Run) (audit.Entry, error) {
		if !r.Status.Active() {
			return audit.Entry{}, apperr.E(apperr.Conflict, "run_finished", "The run has already finished ("+string(r.Status)+"); only a Queued, Running or AwaitingApproval run can be cancelled.")
		}
		r.Status, r.Error, r.ErrorCode, r.FinishedAt, r.UpdatedAt = Cancelled, "Cancelled by a member.", ErrorCancelled, &now, now
		return audit.New(orgID, memberID, "run.cancelled", "AgentRun", r.ID, ""), nil
	})
}

// ErrorCancelled is the error code of a cancelled run.
const ErrorCancelled = "cancelled"
