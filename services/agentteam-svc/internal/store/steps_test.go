package store_test

import (
	"context"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/pkg/outbox"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/runner"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

var _ = Describe("a claimed run's transcript and its park", func() {
	var (
		runs *store.Runs
		work *store.RunWork
		ctx  = context.Background()
	)
	BeforeEach(func() {
		w := outbox.NewWriter(events.SourceAgentteam)
		runs, work = store.NewRuns(db, w, 2), store.NewRunWork(db, w, 2)
	})

	// claimed queues a run and claims it for owner.
	claimed := func(owner string) (run.Run, jobs.Lease) {
		GinkgoHelper()
		s := seed()
		queued, _, err := runs.Enqueue(ctx, run.Run{ID: uuid.NewString(), OrganizationID: s.org, TeamID: s.team, SeatID: s.seat, WorkItemID: s.task},
			audit.New(s.org, "", "run.queued", "AgentRun", "x", ""))
		Expect(err).NotTo(HaveOccurred())
		r, l, err := work.Claim(ctx, queued.ID, owner, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		return r, l
	}
	waitingCall := func(r run.Run) run.Step {
		return run.Step{RunID: r.ID, Kind: run.ToolStep, CallID: "c1", ToolName: "delete_page", FunctionName: "delete_page",
			Arguments: "{}", Risk: "High", Status: run.CallAwaitingApproval}
	}
	entry := func(r run.Run) (memory.Entry, memory.Vector, audit.Entry) {
		id := uuid.NewString()
		return memory.Entry{ID: id, OrganizationID: r.OrganizationID, TeamID: r.TeamID, Kind: memory.Approval, Content: "approved", CreatedAt: time.Now()},
			memory.Vector{EntryID: id, Embedder: "test", Values: []float32{1}}, audit.New(r.OrganizationID, "", "tool_call.approved", "AgentRun", r.ID, "")
	}

	It("numbers the steps it adds, keeps a model answer, and writes nothing once the lease is lost", func() {
		r, l := claimed("w1")
		seq, err := work.AddStep(ctx, l, run.Step{RunID: r.ID, Kind: run.ModelStep, Status: run.CallSucceeded,
			Answer: &run.Answer{Text: "t", ToolCalls: []run.ToolCall{{ID: "c1", Name: "read_page", Arguments: "{}"}}}})
		Expect(err).NotTo(HaveOccurred())
		Expect(seq).To(Equal(1))
		call := run.Step{RunID: r.ID, Kind: run.ToolStep, CallID: "c1", Risk: "Low", Status: run.CallRunning}
		call.Seq, err = work.AddStep(ctx, l, call)
		Expect(err).NotTo(HaveOccurred())
		Expect(call.Seq).To(Equal(2))
		call.Status, call.Result = run.CallSucceeded, "done"
		Expect(work.UpdateStep(ctx, l, call)).To(Succeed())
		steps, err := work.Steps(ctx, r.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(steps[0].Answer.ToolCalls).To(Equal([]run.ToolCall{{ID: "c1", Name: "read_page", Arguments: "{}"}}))
		Expect([]string{steps[1].Status, steps[1].Result}).To(Equal([]string{run.CallSucceeded, "done"}))

		stale := l
		stale.Attempt++
		_, err = work.AddStep(ctx, stale, call)
		Expect(err).To(MatchError(jobs.ErrLeaseLost))
		call.Result = "overwritten"
		Expect(work.UpdateStep(ctx, stale, call)).To(MatchError(jobs.ErrLeaseLost))
		Expect(count(`SELECT count(*) FROM run_steps WHERE run_id = ?`, r.ID)).To(Equal(2))
		Expect(count(`SELECT count(*) FROM run_steps WHERE run_id = ? AND result = 'overwritten'`, r.ID)).To(Equal(0))
	})

	It("parks a run whose call waits, and a decision that leaves none waiting queues it again with a wake-up", func() {
		r, l := claimed("w1")
		st := waitingCall(r)
		var err error
		st.Seq, err = work.AddStep(ctx, l, st)
		Expect(err).NotTo(HaveOccurred())
		r.Status = run.AwaitingApproval
		Expect(work.Park(ctx, l, r)).To(Succeed())
		Expect(count(`SELECT count(*) FROM jobs WHERE run_id = ? AND status = 'Parked' AND lease_until IS NULL`, r.ID)).To(Equal(1))
		_, _, err = work.Claim(ctx, r.ID, "w2", time.Minute)
		Expect(err).To(MatchError(jobs.ErrNoWork))
		wakes := count(`SELECT count(*) FROM outbox WHERE subject = ? AND data->>'run_id' = ?`, events.SubjectAgentRunJob, r.ID)
		_, err = work.Requeue(ctx, time.Now().Add(time.Hour), 100)
		Expect(err).NotTo(HaveOccurred())
		Expect(count(`SELECT count(*) FROM jobs WHERE run_id = ? AND status = 'Parked'`, r.ID)).To(Equal(1), "the sweeper leaves a parked run alone")
		Expect(count(`SELECT count(*) FROM outbox WHERE subject = ? AND data->>'run_id' = ?`, events.SubjectAgentRunJob, r.ID)).To(Equal(wakes))
		list, total, err := runs.Approvals(ctx, r.OrganizationID, org.Page{Limit: 10})
		Expect(err).NotTo(HaveOccurred())
		Expect(total).To(Equal(1))
		Expect(list[0].CallID).To(Equal("c1"))

		st.Status = run.CallApproved
		e, v, a := entry(r)
		out, _, err := runs.Decide(ctx, st, e, v, a)
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Status).To(Equal(run.Queued))
		Expect(out.Resumes).To(Equal(1))
		Expect(count(`SELECT count(*) FROM jobs WHERE run_id = ? AND status = 'Pending'`, r.ID)).To(Equal(1))
		Expect(count(`SELECT count(*) FROM outbox WHERE subject = ? AND data->>'run_id' = ?`, events.SubjectAgentRunJob, r.ID)).To(Equal(wakes + 1))

		e, v, a = entry(r)
		_, _, err = runs.Decide(ctx, st, e, v, a)
		Expect(err).To(MatchError(ContainSubstring("no longer waiting for approval (Approved)")))
	})

	It("does not park a run whose waiting calls were all decided meanwhile", func() {
		r, l := claimed("w1")
		st := waitingCall(r)
		var err error
		st.Seq, err = work.AddStep(ctx, l, st)
		Expect(err).NotTo(HaveOccurred())
		st.Status, st.Result = run.CallRejected, "no"
		e, v, a := entry(r)
		out, _, err := runs.Decide(ctx, st, e, v, a)
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Status).To(Equal(run.Running))
		r.Status = run.AwaitingApproval
		Expect(work.Park(ctx, l, r)).To(MatchError(runner.ErrNoneWaiting))
		Expect(count(`SELECT count(*) FROM jobs WHERE run_id = ? AND status = 'Processing'`, r.ID)).To(Equal(1))
	})
})
