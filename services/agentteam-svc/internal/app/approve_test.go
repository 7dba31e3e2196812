package app_test

import (
	"net/http"
	"strings"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func approve(token, runID string, body any) (int, memoryEntry, string) {
	GinkgoHelper()
	r := client.Do("POST", "/api/assembler/runs/"+runID+"/approve", token, body)
	var e memoryEntry
	if r.Status == http.StatusOK {
		r.JSON(&e)
	}
	return r.Status, e, string(r.Body)
}

var _ = Describe("approving a run", func() {
	var c crew
	var team string

	BeforeEach(func() {
		c = newCrew()
		team = memTeam(c.OrgID)
	})

	It("stores the output as an Approval in team memory and audits run.approved", func() {
		run, agent := memRun(c.OrgID, team, "Completed", "Ship the login fix behind a flag.", 10)
		status, e, body := approve(c.Member.Token, run, nil)
		Expect(status).To(Equal(http.StatusOK), body)
		Expect(e.Kind).To(Equal("Approval"))
		Expect(e.Content).To(Equal("Ship the login fix behind a flag."))
		Expect(*e.RunID).To(Equal(run))
		Expect(*e.AgentID).To(Equal(agent))
		Expect(e.EditDistance).To(BeNil())
		Expect(e.TeamID).To(Equal(team))
		Expect(auditActions(c.OrgID)[0]).To(Equal("run.approved"))
		Expect(contents(searchOn(client, c.Member.Token, team, "login fix flag", ""))).To(Equal([]string{"Ship the login fix behind a flag."}))
	})

	It("stores an unchanged edit as an Approval", func() {
		run, _ := memRun(c.OrgID, team, "Completed", "Same text.", 0)
		status, e, _ := approve(c.Owner.Token, run, map[string]any{"editedOutput": "Same text."})
		Expect(status).To(Equal(http.StatusOK))
		Expect(e.Kind).To(Equal("Approval"))
	})

	It("stores a changed edit as a Correction with its edit distance in characters", func() {
		run, _ := memRun(c.OrgID, team, "Completed", "kitten", 0)
		status, e, body := approve(c.TeamOwner.Token, run, map[string]any{"editedOutput": "sitting"})
		Expect(status).To(Equal(http.StatusOK), body)
		Expect(e.Kind).To(Equal("Correction"))
		Expect(e.Content).To(Equal("sitting"))
		Expect(*e.EditDistance).To(Equal(3))

		run, _ = memRun(c.OrgID, team, "Completed", "café au lait", 0)
		_, e, _ = approve(c.TeamOwner.Token, run, map[string]any{"editedOutput": "cafe au lait!"})
		Expect(*e.EditDistance).To(Equal(2))
	})

	It("refuses to approve an empty output as it is, but takes an edit of it", func() {
		run, _ := memRun(c.OrgID, team, "Completed", "", 0)
		status, _, body := approve(c.Owner.Token, run, map[string]any{})
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body).To(Equal("The approved output is empty."))
		status, e, _ := approve(c.Owner.Token, run, map[string]any{"editedOutput": "Filled in."})
		Expect(status).To(Equal(http.StatusOK))
		Expect(e.Kind).To(Equal("Correction"))
		Expect(*e.EditDistance).To(Equal(10))
	})

	It("approves a run once: the second answers 409", func() {
		run, _ := memRun(c.OrgID, team, "Completed", "Done.", 0)
		status, _, _ := approve(c.Owner.Token, run, nil)
		Expect(status).To(Equal(http.StatusOK))
		status, _, body := approve(c.Owner.Token, run, map[string]any{"editedOutput": "Done!"})
		Expect(status).To(Equal(http.StatusConflict))
		Expect(body).To(Equal("Run has already been approved."))
	})

	DescribeTable("approves only a completed run",
		func(runStatus string) {
			run, _ := memRun(c.OrgID, team, runStatus, "partial", 0)
			status, _, body := approve(c.Owner.Token, run, nil)
			Expect(status).To(Equal(http.StatusConflict))
			Expect(body).To(Equal("Only a completed run can be approved."))
		},
		Entry("Queued", "Queued"),
		Entry("Running", "Running"),
		Entry("Failed", "Failed"),
		Entry("Cancelled", "Cancelled"),
	)

	It("answers 404 Run not found. for an unknown run and 400 for a bad id or edit", func() {
		status, _, body := approve(c.Owner.Token, uuid.NewString(), nil)
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(body).To(Equal("Run not found."))
		status, _, _ = approve(c.Owner.Token, "nope", nil)
		Expect(status).To(Equal(http.StatusBadRequest))

		run, _ := memRun(c.OrgID, team, "Completed", "text", 0)
		status, _, body = approve(c.Owner.Token, run, map[string]any{"editedOutput": strings.Repeat("x", 20001)})
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body).To(Equal("editedOutput must be at most 20000 characters."))
		status, _, _ = approve(c.Owner.Token, run, `{"editedOutput": 5}`)
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/api/memory/entries?teamId="+team, c.Owner.Token, nil).Body).To(MatchJSON(`[]`))
	})

	DescribeTable("needs WorkTasks on the run's team",
		func(role string, want int) {
			run, _ := memRun(c.OrgID, team, "Completed", "text", 0)
			status, _, body := approve(c.as(role), run, nil)
			Expect(status).To(Equal(want))
			if want == http.StatusForbidden {
				Expect(body).To(BeEmpty())
			}
		},
		Entry("Owner", "Owner", http.StatusOK),
		Entry("TeamOwner", "TeamOwner", http.StatusOK),
		Entry("Member", "Member", http.StatusOK),
		Entry("stranger", "Stranger", http.StatusForbidden),
	)
})
