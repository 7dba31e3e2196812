package app_test

import (
	"net/http"
	"strings"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

// boardOf is the board as the API answers it.
type boardOf struct {
	TeamID  string `json:"teamId"`
	Columns []struct {
		Status string `json:"status"`
		Total  int    `json:"total"`
		Tasks  []task `json:"tasks"`
	} `json:"columns"`
}

var _ = Describe("tasks and the board", func() {
	It("creates a task in the Backlog with the default type Task and audits it", func() {
		c := newCrew()
		team := newTeam(c)
		t := newTask(c.Member.Token, team, "Write the intro", "")
		Expect(t.Status).To(Equal("Backlog"))
		Expect(t.Type).To(Equal("Task"))
		Expect(t.TeamID).To(Equal(team))
		Expect(t.AssigneeID).To(BeNil())
		Expect(auditActions(c.OrgID)[0]).To(Equal("task.created"))
		Expect(newTask(c.Member.Token, team, "Check it", "Test").Type).To(Equal("Test"))
	})

	It("answers the spec's 404 and 400 messages and refuses oversized fields", func() {
		c := newCrew()
		team := newTeam(c)
		r := client.Do("POST", "/api/orgboard/tasks", c.Owner.Token, map[string]any{"teamId": uuid.NewString(), "title": "x"})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Team not found."))
		r = client.Do("POST", "/api/orgboard/tasks", c.Owner.Token, map[string]any{"teamId": team, "title": "  "})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("Title is required."))
		r = client.Do("POST", "/api/orgboard/tasks", c.Owner.Token, map[string]any{"teamId": team, "title": strings.Repeat("t", 501)})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = client.Do("POST", "/api/orgboard/tasks", c.Owner.Token, map[string]any{"teamId": team, "title": "x", "description": "a\u0000b"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = client.Do("POST", "/api/orgboard/tasks", c.Owner.Token, map[string]any{"teamId": "nope", "title": "x"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(count(`SELECT count(*) FROM work_items WHERE team_id = ?`, team)).To(BeZero())
	})

	It("shows the four columns in order with their tasks in creation order", func() {
		c := newCrew()
		team := newTeam(c)
		a := newTask(c.Member.Token, team, "a", "")
		b := newTask(c.Member.Token, team, "b", "")
		d := newTask(c.Member.Token, team, "d", "")
		Expect(move(c.Member.Token, b.ID, "InProgress").Status).To(Equal(http.StatusOK))
		Expect(move(c.Member.Token, d.ID, "Done").Status).To(Equal(http.StatusOK))

		var got boardOf
		ok("GET", "/api/orgboard/board?teamId="+team, c.Member.Token, nil, &got)
		Expect(got.TeamID).To(Equal(team))
		statuses, titles := []string{}, map[string][]string{}
		for _, col := range got.Columns {
			statuses = append(statuses, col.Status)
			for _, t := range col.Tasks {
				titles[col.Status] = append(titles[col.Status], t.Title)
			}
		}
		Expect(statuses).To(Equal([]string{"Backlog", "InProgress", "InReview", "Done"}))
		Expect(titles).To(Equal(map[string][]string{"Backlog": {"a"}, "InProgress": {"b"}, "Done": {"d"}}))
		Expect(got.Columns[2].Tasks).To(BeEmpty())
		Expect(got.Columns[0].Tasks[0].ID).To(Equal(a.ID))
	})

	It("pages every column alike and reports each column's total", func() {
		c := newCrew()
		team := newTeam(c)
		for _, title := range []string{"1", "2", "3"} {
			newTask(c.Member.Token, team, title, "")
		}
		var got boardOf
		ok("GET", "/api/orgboard/board?teamId="+team+"&page=2&pageSize=2", c.Member.Token, nil, &got)
		Expect(got.Columns[0].Total).To(Equal(3))
		Expect(got.Columns[0].Tasks).To(HaveLen(1))
		Expect(got.Columns[0].Tasks[0].Title).To(Equal("3"))
	})

	It("shows 20 tasks a column unless asked otherwise", func() {
		c := newCrew()
		team := newTeam(c)
		for range 21 {
			newTask(c.Member.Token, team, "t", "")
		}
		var got boardOf
		ok("GET", "/api/orgboard/board?teamId="+team, c.Member.Token, nil, &got)
		Expect(got.Columns[0].Total).To(Equal(21))
		Expect(got.Columns[0].Tasks).To(HaveLen(20))
	})

	It("never answers a stale board after a write, though unchanged boards are served from a copy", func() {
		c := newCrew()
		team := newTeam(c)
		t := newTask(c.Member.Token, team, "t", "")
		var before, again, after boardOf
		ok("GET", "/api/orgboard/board?teamId="+team, c.Member.Token, nil, &before)
		ok("GET", "/api/orgboard/board?teamId="+team, c.Owner.Token, nil, &again)
		Expect(again).To(Equal(before))
		Expect(move(c.Member.Token, t.ID, "InReview").Status).To(Equal(http.StatusOK))
		ok("GET", "/api/orgboard/board?teamId="+team, c.Member.Token, nil, &after)
		Expect(after.Columns[0].Tasks).To(BeEmpty())
		Expect(after.Columns[2].Tasks[0].ID).To(Equal(t.ID))
		ok("PATCH", "/api/orgboard/tasks/"+t.ID+"/assign", c.Owner.Token, map[string]any{"memberId": c.Member.ID}, nil)
		ok("GET", "/api/orgboard/board?teamId="+team, c.Member.Token, nil, &after)
		Expect(*after.Columns[2].Tasks[0].AssigneeID).To(Equal(c.Member.ID))
		// A stranger is refused even when the board is in the copy.
		r := client.Do("GET", "/api/orgboard/board?teamId="+team, c.Stranger.Token, nil)
		Expect(r.Status).To(Equal(http.StatusForbidden))
	})

	It("answers 404 for the board of an unknown team", func() {
		r := client.Do("GET", "/api/orgboard/board?teamId="+uuid.NewString(), newUser().Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Team not found."))
	})

	It("holds the capability matrix", func() {
		c := newCrew()
		team := newTeam(c)
		t := newTask(c.Owner.Token, team, "shared", "")
		expectMatrix(c, anyMember, func(tok string) testkit.Response {
			return client.Do("POST", "/api/orgboard/tasks", tok, map[string]any{"teamId": team, "title": "mine"})
		})
		expectMatrix(c, anyMember, func(tok string) testkit.Response {
			return client.Do("GET", "/api/orgboard/board?teamId="+team, tok, nil)
		})
		expectMatrix(c, anyMember, func(tok string) testkit.Response { return move(tok, t.ID, "InReview") })
		expectMatrix(c, anyMember, func(tok string) testkit.Response {
			return client.Do("PATCH", "/api/orgboard/tasks/"+t.ID+"/assign", tok, map[string]any{"memberId": c.Member.ID})
		})
	})
})

var _ = Describe("moving a task", func() {
	It("records a transition and a task-moved event only when the status really changes", func() {
		c := newCrew()
		team := newTeam(c)
		t := newTask(c.Member.Token, team, "t", "")
		var moved task
		ok("PATCH", "/api/orgboard/tasks/"+t.ID+"/move", c.Member.Token, map[string]any{"status": "InProgress"}, &moved)
		Expect(moved.Status).To(Equal("InProgress"))
		ok("PATCH", "/api/orgboard/tasks/"+t.ID+"/move", c.Member.Token, map[string]any{"status": "InProgress"}, nil)
		ok("PATCH", "/api/orgboard/tasks/"+t.ID+"/move", c.Member.Token, map[string]any{"status": "Backlog"}, nil)

		var rows []struct{ FromStatus, ToStatus, MemberID string }
		Expect(db.Raw(`SELECT from_status, to_status, member_id::text FROM work_item_transitions WHERE work_item_id = ? ORDER BY created_at, id`, t.ID).
			Scan(&rows).Error).To(Succeed())
		Expect(rows).To(Equal([]struct{ FromStatus, ToStatus, MemberID string }{
			{"Backlog", "InProgress", c.Member.ID}, {"InProgress", "Backlog", c.Member.ID},
		}))
		Expect(count(`SELECT count(*) FROM outbox WHERE subject = 'agentteam.task.moved.v1' AND data->>'task_id' = ?`, t.ID)).To(Equal(2))
		Expect(count(`SELECT count(*) FROM outbox WHERE subject = 'agentteam.task.moved.v1' AND data->>'task_id' = ? AND data->>'organization_id' = ?
			AND data->>'from_status' = 'Backlog' AND data->>'to_status' = 'InProgress' AND data->>'member_id' = ?`, t.ID, c.OrgID, c.Member.ID)).To(Equal(1))
		Expect(auditActions(c.OrgID)[:3]).To(Equal([]string{"task.moved", "task.moved", "task.moved"}))
	})

	It("refuses an unknown status with 400 and an unknown task with 404", func() {
		c := newCrew()
		t := newTask(c.Member.Token, newTeam(c), "t", "")
		r := move(c.Member.Token, t.ID, "Archived")
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("status must be Backlog, InProgress, InReview or Done."))
		r = move(c.Member.Token, uuid.NewString(), "Done")
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Task not found."))
		Expect(count(`SELECT count(*) FROM work_item_transitions WHERE work_item_id = ?`, t.ID)).To(BeZero())
	})
})

var _ = Describe("assigning a task", func() {
	It("assigns a member of the organization, audits it and puts it in the member's cartable", func() {
		c := newCrew()
		team := newTeam(c)
		older := newTask(c.Owner.Token, team, "older", "")
		t := newTask(c.Owner.Token, team, "newer", "")
		ok("PATCH", "/api/orgboard/tasks/"+older.ID+"/assign", c.Owner.Token, map[string]any{"memberId": c.Member.ID}, nil)
		var got task
		ok("PATCH", "/api/orgboard/tasks/"+t.ID+"/assign", c.Owner.Token, map[string]any{"memberId": c.Member.ID}, &got)
		Expect(*got.AssigneeKind).To(Equal("Member"))
		Expect(*got.AssigneeID).To(Equal(c.Member.ID))
		Expect(auditActions(c.OrgID)[0]).To(Equal("task.assigned"))

		var cartable []task
		ok("GET", "/api/orgboard/cartable", c.Member.Token, nil, &cartable)
		Expect(cartable).To(HaveLen(2))
		Expect(cartable[0].ID).To(Equal(t.ID))
	})

	It("refuses a member outside the organization with 400 and an unknown task with 404", func() {
		c := newCrew()
		t := newTask(c.Owner.Token, newTeam(c), "t", "")
		r := client.Do("PATCH", "/api/orgboard/tasks/"+t.ID+"/assign", c.Owner.Token, map[string]any{"memberId": c.Stranger.ID})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("The member does not belong to the team's organization."))
		r = client.Do("PATCH", "/api/orgboard/tasks/"+uuid.NewString()+"/assign", c.Owner.Token, map[string]any{"memberId": c.Member.ID})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Task not found."))
	})
})
