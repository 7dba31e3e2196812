package store_test

import (
	"context"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/outbox"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/runner"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

var _ = Describe("a run's events", func() {
	var (
		runs *store.Runs
		work *store.RunWork
		ctx  = context.Background()
	)
	BeforeEach(func() {
		w := outbox.NewWriter(events.SourceAgentteam)
		runs, work = store.NewRuns(db, w, 2), store.NewRunWork(db, w, 2)
	})

	enqueue := func(s seeded) run.Run {
		GinkgoHelper()
		r, _, err := runs.Enqueue(ctx, run.Run{ID: uuid.NewString(), OrganizationID: s.org, TeamID: s.team, SeatID: s.seat, WorkItemID: s.task},
			audit.New(s.org, "", "run.queued", "AgentRun", "x", ""))
		Expect(err).NotTo(HaveOccurred())
		return r
	}
	step := func(runID string) run.Step {
		return run.Step{RunID: runID, Kind: run.ToolStep, CallID: "call-1", ToolName: "read_page", Risk: "Low", Status: "Running"}
	}

	It("are the run's status changes and each step recorded or updated, numbered from 1, and no others", func() {
		r := enqueue(seed())
		_, l, err := work.Claim(ctx, r.ID, "w", time.Minute)
		Expect(err).NotTo(HaveOccurred())
		_, err = work.AddStep(ctx, l, step(r.ID))
		Expect(err).NotTo(HaveOccurred())
		Expect(db.Exec(`UPDATE run_steps SET status = 'Succeeded', result = 'the page' WHERE run_id = ?`, r.ID).Error).To(Succeed())
		Expect(db.Exec(`UPDATE agent_runs SET output = 'partial' WHERE id = ?`, r.ID).Error).To(Succeed())
		_, err = runs.Cancel(ctx, r.ID, func(r *run.Run) (audit.Entry, error) {
			now := time.Now().UTC()
			r.Status, r.ErrorCode, r.Error, r.FinishedAt, r.UpdatedAt = run.Cancelled, run.ErrorCancelled, "Cancelled by a member.", &now, now
			return audit.New(r.OrganizationID, "", "run.cancelled", "AgentRun", r.ID, ""), nil
		})
		Expect(err).NotTo(HaveOccurred())

		got, err := runs.Events(ctx, r.ID, 0, run.EventPage)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(5))
		for i, e := range got {
			Expect(e.Seq).To(BeEquivalentTo(i + 1))
		}
		Expect([]run.Status{got[0].Status, got[1].Status, got[4].Status}).To(Equal([]run.Status{run.Queued, run.Running, run.Cancelled}))
		Expect(got[4].ErrorCode).To(Equal(run.ErrorCancelled))
		for _, e := range got[2:4] {
			Expect(e.Kind).To(Equal(run.StepEvent))
			Expect(e.Step.Status).To(Equal("Succeeded"), "a step event answers the step as it is now")
		}
		after, err := runs.Events(ctx, r.ID, 3, run.EventPage)
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(HaveLen(2))
		Expect(after[0].Seq).To(BeEquivalentTo(4))
	})

	It("are numbered in commit order: a writer of the run waits for the one before it to commit", func() {
		r := enqueue(seed())
		committed := make(chan time.Time, 1)
		started := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			Expect(db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Exec(`INSERT INTO run_steps (run_id, seq, kind) VALUES (?, 1, 'Model')`, r.ID).Error; err != nil {
					return err
				}
				close(started)
				time.Sleep(300 * time.Millisecond)
				committed <- time.Now()
				return nil
			})).To(Succeed())
		}()
		<-started
		Expect(db.Exec(`UPDATE agent_runs SET status = 'Running' WHERE id = ?`, r.ID).Error).To(Succeed())
		returned := time.Now()
		Expect(returned).To(BeTemporally(">=", <-committed))

		got, err := runs.Events(ctx, r.ID, 0, run.EventPage)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(3))
		Expect([]run.EventKind{got[0].Kind, got[1].Kind, got[2].Kind}).To(Equal([]run.EventKind{run.StatusEvent, run.StepEvent, run.StatusEvent}))
	})
})

var _ = Describe("an organization's cap on running runs", func() {
	ctx := context.Background()

	It("refuses a claim over the cap without counting an attempt, and a run's end wakes the oldest waiting run", func() {
		w := outbox.NewWriter(events.SourceAgentteam)
		runs, work := store.NewRuns(db, w, 2), store.NewRunWork(db, w, 2)
		org := seed()
		var queued []run.Run
		for i := range 3 {
			s := org
			if i > 0 {
				s = seed()
				Expect(db.Exec(`UPDATE teams SET organization_id = ? WHERE id = ?`, org.org, s.team).Error).To(Succeed())
			}
			r, _, err := runs.Enqueue(ctx, run.Run{ID: uuid.NewString(), OrganizationID: org.org, TeamID: s.team, SeatID: s.seat, WorkItemID: s.task},
				audit.New(org.org, "", "run.queued", "AgentRun", "x", ""))
			Expect(err).NotTo(HaveOccurred())
			queued = append(queued, r)
		}
		wakeUps := func(id string) int {
			return count(`SELECT count(*) FROM outbox WHERE subject = ? AND data->>'run_id' = ?`, events.SubjectAgentRunJob, id)
		}
		first, l, err := work.Claim(ctx, queued[0].ID, "w1", time.Minute)
		Expect(err).NotTo(HaveOccurred())
		_, _, err = work.Claim(ctx, queued[1].ID, "w2", time.Minute)
		Expect(err).NotTo(HaveOccurred())

		_, _, err = work.Claim(ctx, queued[2].ID, "w3", time.Minute)
		Expect(err).To(MatchError(runner.ErrOrganizationBusy))
		Expect(count(`SELECT attempts FROM jobs WHERE run_id = ? AND status = 'Pending'`, queued[2].ID)).To(BeZero())
		Expect(wakeUps(queued[2].ID)).To(Equal(1))

		first.Status, first.Output = run.Completed, "done"
		Expect(work.Finish(ctx, l, first)).To(Succeed())
		Expect(wakeUps(queued[2].ID)).To(Equal(2))
		third, _, err := work.Claim(ctx, queued[2].ID, "w3", time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(third.Attempts).To(Equal(1))
	})
})
