package app_test

import (
	"net/http"
	"sync"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

// runOf is an agent run as the API answers it.
type runOf struct {
	ID         string  `json:"id"`
	SeatID     string  `json:"seatId"`
	WorkItemID string  `json:"workItemId"`
	AgentID    *string `json:"agentId"`
	Status     string  `json:"status"`
	Error      string  `json:"error"`
	ErrorCode  string  `json:"errorCode"`
	FinishedAt *string `json:"finishedAt"`
}

// runWorld is a crew with a team, an AI seat and a task.
type runWorld struct {
	crew
	team, seat, agent, task string
}

func newRunWorld() runWorld {
	GinkgoHelper()
	w := runWorld{crew: newCrew()}
	w.team = newTeam(w.crew)
	w.seat, w.agent = newAISeat(w.crew, w.team, "Developer")
	w.task = newTask(w.Member.Token, w.team, "Build it", "").ID
	return w
}

func (w runWorld) createRun(token string) testkit.Response {
	GinkgoHelper()
	return client.Do("POST", "/api/assembler/runs", token, map[string]any{"seatId": w.seat, "workItemId": w.task})
}

var _ = Describe("agent runs", func() {
	It("queues a run with its job and wake-up, and answers the active run to a second request", func() {
		w := newRunWorld()
		var r runOf
		ok("POST", "/api/assembler/runs", w.Member.Token, map[string]any{"seatId": w.seat, "workItemId": w.task}, &r)
		Expect(r.Status).To(Equal("Queued"))
		Expect(r.SeatID).To(Equal(w.seat))
		Expect(r.WorkItemID).To(Equal(w.task))
		Expect(*r.AgentID).To(Equal(w.agent))
		Expect(count(`SELECT count(*) FROM jobs WHERE run_id = ? AND kind = 'agent.run' AND status = 'Pending'`, r.ID)).To(Equal(1))
		Expect(count(`SELECT count(*) FROM outbox WHERE subject = 'jobs.agentteam.agent.run' AND data->>'run_id' = ?`, r.ID)).To(Equal(1))
		Expect(auditActions(w.OrgID)[0]).To(Equal("run.queued"))

		var again runOf
		ok("POST", "/api/assembler/runs", w.Owner.Token, map[string]any{"seatId": w.seat, "workItemId": w.task}, &again)
		Expect(again.ID).To(Equal(r.ID))
		var got runOf
		ok("GET", "/api/assembler/runs/"+r.ID, w.Member.Token, nil, &got)
		Expect(got).To(Equal(r))
	})

	It("answers one run to concurrent requests", func() {
		w := newRunWorld()
		ids := make(chan string, 6)
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				defer GinkgoRecover()
				r := w.createRun(w.Member.Token)
				Expect(r.Status).To(Equal(http.StatusOK))
				var run runOf
				r.JSON(&run)
				ids <- run.ID
			})
		}
		wg.Wait()
		close(ids)
		seen := map[string]bool{}
		for id := range ids {
			seen[id] = true
		}
		Expect(seen).To(HaveLen(1))
		Expect(count(`SELECT count(*) FROM agent_runs WHERE work_item_id = ?`, w.task)).To(Equal(1))
		Expect(count(`SELECT count(*) FROM jobs j JOIN agent_runs r ON r.id = j.run_id WHERE r.work_item_id = ?`, w.task)).To(Equal(1))
	})

	It("answers the 404s and refuses a work item of another team with 400", func() {
		w := newRunWorld()
		r := client.Do("POST", "/api/assembler/runs", w.Owner.Token, map[string]any{"seatId": uuid.NewString(), "workItemId": w.task})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Seat not found."))
		r = client.Do("POST", "/api/assembler/runs", w.Owner.Token, map[string]any{"seatId": w.seat, "workItemId": uuid.NewString()})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Task not found."))
		other := newTask(w.Owner.Token, newTeam(w.crew), "elsewhere", "")
		r = client.Do("POST", "/api/assembler/runs", w.Owner.Token, map[string]any{"seatId": w.seat, "workItemId": other.ID})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("The work item is not on the seat's team."))
		r = client.Do("GET", "/api/assembler/runs/"+uuid.NewString(), w.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Run not found."))
		r = client.Do("POST", "/api/assembler/runs/"+uuid.NewString()+"/cancel", w.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Run not found."))
		Expect(count(`SELECT count(*) FROM agent_runs WHERE seat_id = ?`, w.seat)).To(BeZero())
	})

	It("lists the runs of a work item or of a seat, newest first, and needs exactly one of them", func() {
		w := newRunWorld()
		var first, second runOf
		ok("POST", "/api/assembler/runs", w.Member.Token, map[string]any{"seatId": w.seat, "workItemId": w.task}, &first)
		ok("POST", "/api/assembler/runs/"+first.ID+"/cancel", w.Member.Token, nil, nil)
		ok("POST", "/api/assembler/runs", w.Member.Token, map[string]any{"seatId": w.seat, "workItemId": w.task}, &second)
		Expect(second.ID).NotTo(Equal(first.ID))
		for _, q := range []string{"workItemId=" + w.task, "seatId=" + w.seat} {
			var list []runOf
			ok("GET", "/api/assembler/runs?"+q, w.Member.Token, nil, &list)
			Expect([]string{list[0].ID, list[1].ID}).To(Equal([]string{second.ID, first.ID}))
		}
		for _, q := range []string{"", "?workItemId=" + w.task + "&seatId=" + w.seat} {
			r := client.Do("GET", "/api/assembler/runs"+q, w.Member.Token, nil)
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(string(r.Body)).To(Equal("Give exactly one of workItemId and seatId."))
		}
		r := client.Do("GET", "/api/assembler/runs?seatId="+uuid.NewString(), w.Member.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
	})

	It("cancels a queued run, finishes its job, and refuses to cancel it again with 409", func() {
		w := newRunWorld()
		var r runOf
		ok("POST", "/api/assembler/runs", w.Member.Token, map[string]any{"seatId": w.seat, "workItemId": w.task}, &r)
		var cancelled runOf
		ok("POST", "/api/assembler/runs/"+r.ID+"/cancel", w.Member.Token, nil, &cancelled)
		Expect(cancelled.Status).To(Equal("Cancelled"))
		Expect(cancelled.ErrorCode).To(Equal("cancelled"))
		Expect(cancelled.FinishedAt).NotTo(BeNil())
		Expect(count(`SELECT count(*) FROM jobs WHERE run_id = ? AND status = 'Done'`, r.ID)).To(Equal(1))
		Expect(auditActions(w.OrgID)[0]).To(Equal("run.cancelled"))

		again := client.Do("POST", "/api/assembler/runs/"+r.ID+"/cancel", w.Member.Token, nil)
		Expect(again.Status).To(Equal(http.StatusConflict))
		Expect(string(again.Body)).To(Equal("The run has already finished (Cancelled); only a Queued, Running or AwaitingApproval run can be cancelled."))
	})

	It("holds the capability matrix, checking WorkTasks on the seat's team", func() {
		w := newRunWorld()
		var r runOf
		ok("POST", "/api/assembler/runs", w.Owner.Token, map[string]any{"seatId": w.seat, "workItemId": w.task}, &r)
		expectMatrix(w.crew, anyMember, func(t string) testkit.Response { return w.createRun(t) })
		expectMatrix(w.crew, anyMember, func(t string) testkit.Response { return client.Do("GET", "/api/assembler/runs/"+r.ID, t, nil) })
		expectMatrix(w.crew, anyMember, func(t string) testkit.Response {
			return client.Do("GET", "/api/assembler/runs?workItemId="+w.task, t, nil)
		})
		expectMatrix(w.crew, anyMember, func(t string) testkit.Response {
			var active runOf
			ok("POST", "/api/assembler/runs", w.Owner.Token, map[string]any{"seatId": w.seat, "workItemId": w.task}, &active)
			return client.Do("POST", "/api/assembler/runs/"+active.ID+"/cancel", t, nil)
		})
	})
})
