package app_test

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

type analytics struct {
	OrganizationID      string   `json:"organizationId"`
	TeamID              *string  `json:"teamId"`
	Approvals           int      `json:"approvals"`
	Corrections         int      `json:"corrections"`
	ApprovalRate        *float64 `json:"approvalRate"`
	AverageEditDistance *float64 `json:"averageEditDistance"`
	TasksDone           int      `json:"tasksDone"`
	TokensUsed          int64    `json:"tokensUsed"`
	Agents              []struct {
		AgentID             string   `json:"agentId"`
		Runs                int      `json:"runs"`
		Completed           int      `json:"completed"`
		Failed              int      `json:"failed"`
		Approvals           int      `json:"approvals"`
		Corrections         int      `json:"corrections"`
		AverageEditDistance *float64 `json:"averageEditDistance"`
		TokensUsed          int64    `json:"tokensUsed"`
		EditDistanceTrend   []struct {
			WeekStart           string  `json:"weekStart"`
			AverageEditDistance float64 `json:"averageEditDistance"`
			Reviews             int     `json:"reviews"`
		} `json:"editDistanceTrend"`
	} `json:"agents"`
}

func getAnalytics(token, query string) (int, analytics, string) {
	GinkgoHelper()
	r := client.Do("GET", "/api/governance/analytics?"+query, token, nil)
	var a analytics
	if r.Status == http.StatusOK {
		r.JSON(&a)
	}
	return r.Status, a, string(r.Body)
}

// mondayOf is the Monday (YYYY-MM-DD, UTC) of t's week.
func mondayOf(t time.Time) string {
	t = t.UTC()
	return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7)).Format(time.DateOnly)
}

var _ = Describe("governance analytics", func() {
	var c crew
	var teamA, teamB string

	BeforeEach(func() {
		c = newCrew()
		teamA, teamB = memTeam(c.OrgID), memTeam(c.OrgID)
	})

	It("answers zero figures and null rates for an organization without reviews", func() {
		status, a, body := getAnalytics(c.Owner.Token, "organizationId="+c.OrgID)
		Expect(status).To(Equal(http.StatusOK), body)
		Expect(a.OrganizationID).To(Equal(c.OrgID))
		Expect(a.TeamID).To(BeNil())
		Expect(a.ApprovalRate).To(BeNil())
		Expect(a.AverageEditDistance).To(BeNil())
		Expect(a.Agents).To(BeEmpty())
	})

	It("computes approval rate, edit distances, per-agent metrics with the weekly trend, tasks done and tokens from a scripted history", func() {
		// Agent 1 (team A): three runs, two completed; one approved as is, one corrected by 3.
		run1, agent1 := memRun(c.OrgID, teamA, "Completed", "kitten", 100)
		run2 := agentRun(c.OrgID, teamA, agent1, "Completed", "flaw", 50)
		agentRun(c.OrgID, teamA, agent1, "Failed", "", 7)
		// Agent 2 (team B): one run corrected by 2, a week ago.
		run3, agent2 := memRun(c.OrgID, teamB, "Completed", "abc", 20)
		for _, a := range []struct {
			run  string
			body any
		}{{run1, nil}, {run2, map[string]any{"editedOutput": "lawn"}}, {run3, map[string]any{"editedOutput": "a"}}} {
			status, _, body := approve(c.Member.Token, a.run, a.body)
			Expect(status).To(Equal(http.StatusOK), body)
		}
		lastWeek := time.Now().UTC().AddDate(0, 0, -7)
		Expect(db.Exec(`UPDATE memory_entries SET created_at = ? WHERE run_id = ?`, lastWeek, run3).Error).To(Succeed())
		// A note is not a review; tasks: two done in A, one in B, one open.
		createEntry(c.Owner.Token, teamA, "Approval", "A hand-written approval note.")
		for _, t := range []struct{ team, status string }{{teamA, "Done"}, {teamA, "Done"}, {teamB, "Done"}, {teamB, "InProgress"}} {
			Expect(db.Exec(`INSERT INTO work_items (id, team_id, title, status) VALUES (?, ?, 'T', ?)`, uuid.NewString(), t.team, t.status).Error).To(Succeed())
		}

		status, a, body := getAnalytics(c.Owner.Token, "organizationId="+c.OrgID)
		Expect(status).To(Equal(http.StatusOK), body)
		Expect(a.Approvals).To(Equal(1))
		Expect(a.Corrections).To(Equal(2))
		Expect(*a.ApprovalRate).To(BeNumerically("~", 1.0/3, 1e-9))
		Expect(*a.AverageEditDistance).To(BeNumerically("~", 4.0/3, 1e-9))
		Expect(a.TasksDone).To(Equal(3))
		Expect(a.TokensUsed).To(Equal(int64(100 + 50 + 7 + 20)))
		Expect(a.Agents).To(HaveLen(2))
		byID := map[string]int{a.Agents[0].AgentID: 0, a.Agents[1].AgentID: 1}
		one, two := a.Agents[byID[agent1]], a.Agents[byID[agent2]]
		Expect([]int{one.Runs, one.Completed, one.Failed, one.Approvals, one.Corrections}).To(Equal([]int{3, 2, 1, 1, 1}))
		Expect(*one.AverageEditDistance).To(BeNumerically("~", 1.0, 1e-9))
		Expect(one.TokensUsed).To(Equal(int64(157)))
		Expect(one.EditDistanceTrend).To(HaveLen(1))
		Expect(one.EditDistanceTrend[0].WeekStart).To(Equal(mondayOf(time.Now())))
		Expect(one.EditDistanceTrend[0].AverageEditDistance).To(BeNumerically("~", 1.0, 1e-9))
		Expect(one.EditDistanceTrend[0].Reviews).To(Equal(2))
		Expect([]int{two.Runs, two.Completed, two.Failed, two.Approvals, two.Corrections}).To(Equal([]int{1, 1, 0, 0, 1}))
		Expect(two.EditDistanceTrend).To(HaveLen(1))
		Expect(two.EditDistanceTrend[0].WeekStart).To(Equal(mondayOf(lastWeek)))
		Expect(two.EditDistanceTrend[0].AverageEditDistance).To(BeNumerically("~", 2.0, 1e-9))

		status, a, _ = getAnalytics(c.Owner.Token, "organizationId="+c.OrgID+"&teamId="+teamB)
		Expect(status).To(Equal(http.StatusOK))
		Expect(*a.TeamID).To(Equal(teamB))
		Expect([]int{a.Approvals, a.Corrections, a.TasksDone}).To(Equal([]int{0, 1, 1}))
		Expect(*a.ApprovalRate).To(BeZero())
		Expect(a.TokensUsed).To(Equal(int64(20)))
		Expect(a.Agents).To(HaveLen(1))
	})

	It("answers 404 Team not found. for a team outside the organization", func() {
		other := newCrew()
		for _, team := range []string{memTeam(other.OrgID), uuid.NewString()} {
			status, _, body := getAnalytics(c.Owner.Token, "organizationId="+c.OrgID+"&teamId="+team)
			Expect(status).To(Equal(http.StatusNotFound))
			Expect(body).To(Equal("Team not found."))
		}
		status, _, _ := getAnalytics(c.Owner.Token, "organizationId=nope")
		Expect(status).To(Equal(http.StatusBadRequest))
	})

	DescribeTable("is owner-level",
		func(role string, want int) {
			status, _, body := getAnalytics(c.as(role), "organizationId="+c.OrgID)
			Expect(status).To(Equal(want))
			if want == http.StatusForbidden {
				Expect(body).To(BeEmpty())
			}
		},
		Entry("Owner", "Owner", http.StatusOK),
		Entry("TeamOwner", "TeamOwner", http.StatusForbidden),
		Entry("Member", "Member", http.StatusForbidden),
		Entry("stranger", "Stranger", http.StatusForbidden),
	)
})
