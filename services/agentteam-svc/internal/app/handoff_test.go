package app_test

import (
	"net/http"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// qaTasks are the QA tasks handed off from the finished task.
func qaTasks(finished string) []task {
	GinkgoHelper()
	var rows []struct {
		ID, Type, Status, AssigneeKind, AssigneeID, ParentID string
	}
	Expect(db.Raw(`SELECT id::text, type, status, assignee_kind, assignee_id::text, parent_id::text FROM work_items WHERE parent_id = ?`, finished).
		Scan(&rows).Error).To(Succeed())
	out := make([]task, len(rows))
	for i, r := range rows {
		out[i] = task{ID: r.ID, Type: r.Type, Status: r.Status, AssigneeKind: &r.AssigneeKind, AssigneeID: &r.AssigneeID, ParentID: &r.ParentID}
	}
	return out
}

var _ = Describe("the QA handoff", func() {
	It("hands a finished task to the QA seat once: a Review task for its agent and a queued run", func() {
		c := newCrew()
		team := newTeam(c)
		qaSeat, qaAgent := newAISeat(c, team, "qa")
		t := newTask(c.Member.Token, team, "Ship it", "Feature")
		Expect(move(c.Member.Token, t.ID, "Done").Status).To(Equal(http.StatusOK))

		qa := qaTasks(t.ID)
		Expect(qa).To(HaveLen(1))
		Expect(qa[0].Type).To(Equal("Review"))
		Expect(*qa[0].AssigneeKind).To(Equal("Agent"))
		Expect(*qa[0].AssigneeID).To(Equal(qaAgent))
		Expect(count(`SELECT count(*) FROM agent_runs WHERE seat_id = ? AND work_item_id = ? AND status = 'Queued' AND agent_id = ?`, qaSeat, qa[0].ID, qaAgent)).To(Equal(1))
		Expect(count(`SELECT count(*) FROM jobs j JOIN agent_runs r ON r.id = j.run_id WHERE r.work_item_id = ? AND j.status = 'Pending'`, qa[0].ID)).To(Equal(1))
		Expect(auditActions(c.OrgID)).To(ContainElement("handoff.triggered"))

		// Back and forth: the task has handed off before, so Done again hands off nothing.
		Expect(move(c.Member.Token, t.ID, "InProgress").Status).To(Equal(http.StatusOK))
		Expect(move(c.Member.Token, t.ID, "Done").Status).To(Equal(http.StatusOK))
		Expect(qaTasks(t.ID)).To(HaveLen(1))
		Expect(count(`SELECT count(*) FROM agent_runs WHERE seat_id = ?`, qaSeat)).To(Equal(1))

		// The QA task itself, a Review, never hands off again.
		Expect(move(c.Member.Token, qa[0].ID, "Done").Status).To(Equal(http.StatusOK))
		Expect(qaTasks(qa[0].ID)).To(BeEmpty())
		Expect(count(`SELECT count(*) FROM audit_records WHERE organization_id = ? AND action = 'handoff.triggered'`, c.OrgID)).To(Equal(1))
	})

	It("never hands off a Test or Review task", func() {
		c := newCrew()
		team := newTeam(c)
		newAISeat(c, team, "QA")
		for _, typ := range []string{"Test", "Review"} {
			t := newTask(c.Member.Token, team, typ, typ)
			Expect(move(c.Member.Token, t.ID, "Done").Status).To(Equal(http.StatusOK))
			Expect(qaTasks(t.ID)).To(BeEmpty())
		}
		Expect(auditActions(c.OrgID)).NotTo(ContainElement("handoff.triggered"))
	})

	It("moves to Done without a handoff when the team has no QA AI seat", func() {
		c := newCrew()
		team := newTeam(c)
		newSeat(c, team, "QA")
		newAISeat(c, team, "Developer")
		t := newTask(c.Member.Token, team, "t", "")
		var moved task
		ok("PATCH", "/api/orgboard/tasks/"+t.ID+"/move", c.Member.Token, map[string]any{"status": "Done"}, &moved)
		Expect(moved.Status).To(Equal("Done"))
		Expect(qaTasks(t.ID)).To(BeEmpty())
		Expect(count(`SELECT count(*) FROM agent_runs WHERE team_id = ?`, team)).To(BeZero())
	})

	It("hands off exactly once when concurrent moves reach Done", func() {
		c := newCrew()
		team := newTeam(c)
		qaSeat, _ := newAISeat(c, team, "QA")
		t := newTask(c.Member.Token, team, "race", "")
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				defer GinkgoRecover()
				Expect(move(c.Member.Token, t.ID, "Done").Status).To(Equal(http.StatusOK))
			})
		}
		wg.Wait()
		Expect(qaTasks(t.ID)).To(HaveLen(1))
		Expect(count(`SELECT count(*) FROM agent_runs WHERE seat_id = ?`, qaSeat)).To(Equal(1))
		Expect(count(`SELECT count(*) FROM work_item_transitions WHERE work_item_id = ?`, t.ID)).To(Equal(1))
		Expect(count(`SELECT count(*) FROM audit_records WHERE organization_id = ? AND action = 'handoff.triggered'`, c.OrgID)).To(Equal(1))
	})
})
