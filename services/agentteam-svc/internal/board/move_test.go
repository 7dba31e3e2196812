package board_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/seat"
)

// fakeStore holds one task and records the move its decide function plans.
type fakeStore struct {
	board.Store
	task    board.WorkItem
	planned board.Move
}

func (f *fakeStore) Task(context.Context, string) (board.WorkItem, error) { return f.task, nil }

func (f *fakeStore) MoveTask(_ context.Context, _ string, decide func(board.WorkItem) (board.Move, error)) (board.WorkItem, bool, error) {
	mv, err := decide(f.task)
	f.planned = mv
	return mv.Item, mv.Handoff != nil, err
}

type fakeSeats []seat.Seat

func (s fakeSeats) AISeats(context.Context, string) ([]seat.Seat, error) { return s, nil }

// everyone is a directory where every member is the Owner of the one organization.
type everyone struct{}

func (everyone) RoleOf(context.Context, string, string) (access.Role, bool, error) {
	return access.Owner, true, nil
}

func (everyone) TeamRole(context.Context, string, string) (string, access.Role, bool, error) {
	return "org", access.Owner, true, nil
}

func ptr(s string) *string { return &s }

var _ = Describe("planning a move", func() {
	var (
		store *fakeStore
		seats fakeSeats
		svc   *board.Service
		n     int
	)
	BeforeEach(func() {
		store = &fakeStore{task: board.WorkItem{ID: "task", TeamID: "team", Title: "Ship", Type: board.TypeTask, Status: board.StatusInProgress}}
		seats = fakeSeats{
			{ID: "dev", RoleName: "Developer", State: seat.StateAI, AgentID: ptr("dev-agent")},
			{ID: "qa", RoleName: " qa ", State: seat.StateAI, AgentID: ptr("qa-agent")},
		}
		n = 0
	})
	JustBeforeEach(func() {
		svc = board.NewService(board.Deps{
			Store: store, Seats: seats, Access: access.NewChecker(everyone{}),
			NewID: func() string { n++; return fmt.Sprint("id", n) }, Now: func() time.Time { return time.Unix(0, 0) },
		})
	})

	It("records no transition when the status does not change", func() {
		_, err := svc.Move(context.Background(), "m", "task", board.StatusInProgress)
		Expect(err).NotTo(HaveOccurred())
		Expect(store.planned.Transition).To(BeNil())
		Expect(store.planned.Audit.Action).To(Equal("task.moved"))
	})

	It("plans a Review of the finished task for the QA seat's agent, found case-insensitively", func() {
		_, err := svc.Move(context.Background(), "m", "task", board.StatusDone)
		Expect(err).NotTo(HaveOccurred())
		h := store.planned.Handoff
		Expect(h).NotTo(BeNil())
		Expect(h.Task.Type).To(Equal(board.TypeReview))
		Expect(*h.Task.ParentID).To(Equal("task"))
		Expect(*h.Task.HandoffOf).To(Equal("task"))
		Expect(*h.Task.AssigneeKind).To(Equal(board.AssigneeAgent))
		Expect(*h.Task.AssigneeID).To(Equal("qa-agent"))
		Expect(h.Run.SeatID).To(Equal("qa"))
		Expect(h.Run.WorkItemID).To(Equal(h.Task.ID))
		Expect(h.Audit.Action).To(Equal("handoff.triggered"))
		Expect(store.planned.Transition.To).To(Equal(board.StatusDone))
	})

	DescribeTable("plans no handoff for Test and Review tasks, whatever their case",
		func(typ string) {
			store.task.Type = typ
			_, err := svc.Move(context.Background(), "m", "task", board.StatusDone)
			Expect(err).NotTo(HaveOccurred())
			Expect(store.planned.Handoff).To(BeNil())
		},
		Entry(nil, "Test"), Entry(nil, "review"), Entry(nil, "TEST"),
	)

	Context("when the team's QA seat has no agent", func() {
		BeforeEach(func() { seats = fakeSeats{{ID: "qa", RoleName: "QA", State: seat.StateAI}} })

		It("moves without a handoff", func() {
			_, err := svc.Move(context.Background(), "m", "task", board.StatusDone)
			Expect(err).NotTo(HaveOccurred())
			Expect(store.planned.Handoff).To(BeNil())
		})
	})

	It("refuses an unknown status before reading anything", func() {
		_, err := svc.Move(context.Background(), "m", "task", "Archived")
		e, ok := apperr.As(err)
		Expect(ok).To(BeTrue())
		Expect(e.Kind).To(Equal(apperr.Invalid))
		Expect(e.Message).To(Equal("status must be Backlog, InProgress, InReview or Done."))
		Expect(store.planned.Audit.Action).To(BeEmpty())
	})
})
