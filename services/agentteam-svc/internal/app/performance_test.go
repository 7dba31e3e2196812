package app_test

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

// performanceOf is the performance answer.
type performanceOf struct {
	OrganizationID string  `json:"organizationId"`
	TeamID         *string `json:"teamId"`
	Assignees      []struct {
		AssigneeKind string `json:"assigneeKind"`
		AssigneeID   string `json:"assigneeId"`
		Pending      struct {
			Backlog    int `json:"backlog"`
			InProgress int `json:"inProgress"`
			InReview   int `json:"inReview"`
		} `json:"pending"`
		Done              int      `json:"done"`
		WorkedHours       float64  `json:"workedHours"`
		AverageCycleHours *float64 `json:"averageCycleHours"`
	} `json:"assignees"`
	UnassignedPending int `json:"unassignedPending"`
}

// scripted inserts a task with its status, assignee and transitions at chosen times, as if it
// had lived through them.
func scripted(teamID, status string, assigneeKind, assigneeID *string, moves ...any) {
	GinkgoHelper()
	id := uuid.NewString()
	Expect(db.Exec(`INSERT INTO work_items (id, team_id, title, status, assignee_kind, assignee_id) VALUES (?, ?, 'scripted', ?, ?, ?)`,
		id, teamID, status, assigneeKind, assigneeID).Error).To(Succeed())
	from := "Backlog"
	for i := 0; i+1 < len(moves); i += 2 {
		to, at := moves[i].(string), moves[i+1].(time.Time)
		Expect(db.Exec(`INSERT INTO work_item_transitions (id, work_item_id, team_id, from_status, to_status, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			uuid.NewString(), id, teamID, from, to, at).Error).To(Succeed())
		from = to
	}
}

func ptr(s string) *string { return &s }

var _ = Describe("performance", func() {
	It("computes per-assignee figures, humans and AI alike, from a scripted history", func() {
		c := newCrew()
		team, otherTeam := newTeam(c), newTeam(c)
		member, agent := c.Member.ID, uuid.NewString()
		t0 := time.Now().Add(-240 * time.Hour).UTC()
		h := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Hour))) }
		// The member: one task done in 4h of cycle with 3h InProgress, one InProgress for the last hour.
		scripted(team, "Done", ptr("Member"), &member, "InProgress", h(0), "InReview", h(2), "InProgress", h(3), "Done", h(4))
		scripted(team, "InProgress", ptr("Member"), &member, "InProgress", time.Now().Add(-time.Hour))
		// The agent: one task done in 2h, one waiting in review, one in the backlog.
		scripted(team, "Done", ptr("Agent"), &agent, "InProgress", h(10), "Done", h(12))
		scripted(team, "InReview", ptr("Agent"), &agent, "InProgress", h(20), "InReview", h(20.5))
		scripted(team, "Backlog", ptr("Agent"), &agent)
		// Unassigned: two pending, one done.
		scripted(team, "Backlog", nil, nil)
		scripted(team, "InReview", nil, nil)
		scripted(team, "Done", nil, nil, "Done", h(1))
		// Another team of the organization.
		scripted(otherTeam, "Backlog", ptr("Member"), &member)

		var p performanceOf
		ok("GET", "/api/orgboard/performance?organizationId="+c.OrgID+"&teamId="+team, c.Owner.Token, nil, &p)
		Expect(*p.TeamID).To(Equal(team))
		Expect(p.UnassignedPending).To(Equal(2))
		Expect(p.Assignees).To(HaveLen(2))
		ai, human := p.Assignees[0], p.Assignees[1]
		Expect(ai.AssigneeKind).To(Equal("Agent"))
		Expect(ai.AssigneeID).To(Equal(agent))
		Expect([]int{ai.Pending.Backlog, ai.Pending.InProgress, ai.Pending.InReview, ai.Done}).To(Equal([]int{1, 0, 1, 1}))
		Expect(ai.WorkedHours).To(BeNumerically("~", 2.5, 0.001))
		Expect(*ai.AverageCycleHours).To(BeNumerically("~", 2, 0.001))
		Expect(human.AssigneeKind).To(Equal("Member"))
		Expect(human.AssigneeID).To(Equal(member))
		Expect([]int{human.Pending.Backlog, human.Pending.InProgress, human.Pending.InReview, human.Done}).To(Equal([]int{0, 1, 0, 1}))
		Expect(human.WorkedHours).To(BeNumerically("~", 4, 0.01))
		Expect(*human.AverageCycleHours).To(BeNumerically("~", 4, 0.001))

		ok("GET", "/api/orgboard/performance?organizationId="+c.OrgID, c.Owner.Token, nil, &p)
		Expect(p.TeamID).To(BeNil())
		Expect(p.Assignees[1].Pending.Backlog).To(Equal(1))
	})

	It("answers 404 for a team of another organization and holds the capability matrix", func() {
		c, other := newCrew(), newCrew()
		r := client.Do("GET", "/api/orgboard/performance?organizationId="+c.OrgID+"&teamId="+newTeam(other), c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Team not found."))
		expectMatrix(c, ownerOnly, func(t string) testkit.Response {
			return client.Do("GET", "/api/orgboard/performance?organizationId="+c.OrgID, t, nil)
		})
	})
})

var _ = Describe("the audit log", func() {
	It("lists the organization's records newest first, paged, for the Owner", func() {
		c := newCrew()
		team := newTeam(c)
		t := newTask(c.Member.Token, team, "t", "")
		var log []struct {
			ID, Action, EntityType, EntityID, Detail string
			MemberID                                 *string
		}
		ok("GET", "/api/orgboard/audit?organizationId="+c.OrgID+"&pageSize=2", c.Owner.Token, nil, &log)
		Expect(log).To(HaveLen(2))
		Expect(log[0].Action).To(Equal("task.created"))
		Expect(log[0].EntityType).To(Equal("WorkItem"))
		Expect(log[0].EntityID).To(Equal(t.ID))
		Expect(*log[0].MemberID).To(Equal(c.Member.ID))
		Expect(log[1].Action).To(Equal("team.created"))
		expectMatrix(c, ownerOnly, func(tok string) testkit.Response {
			return client.Do("GET", "/api/orgboard/audit?organizationId="+c.OrgID, tok, nil)
		})
	})
})
