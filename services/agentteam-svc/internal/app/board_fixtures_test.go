package app_test

import (
	"net/http"
	"slices"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

// Fixtures of the board specs: a crew with a team, built through the API.

// ok sends a request that must answer 200 and decodes the answer into out (when not nil).
func ok(method, path, token string, body any, out any) testkit.Response {
	GinkgoHelper()
	r := client.Do(method, path, token, body)
	Expect(r.Status).To(Equal(http.StatusOK), "%s %s: %s", method, path, r.Body)
	if out != nil {
		r.JSON(out)
	}
	return r
}

// idOf is an answer's id.
type idOf struct {
	ID string `json:"id"`
}

// newTeam creates a team in the crew's organization (as its Owner) and returns its id.
func newTeam(c crew) string {
	GinkgoHelper()
	var t idOf
	ok("POST", "/api/orgboard/teams", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": "Team " + uuid.NewString()[:6]}, &t)
	return t.ID
}

// task is a work item as the API answers it.
type task struct {
	ID           string  `json:"id"`
	TeamID       string  `json:"teamId"`
	Title        string  `json:"title"`
	Type         string  `json:"type"`
	Status       string  `json:"status"`
	AssigneeKind *string `json:"assigneeKind"`
	AssigneeID   *string `json:"assigneeId"`
	ParentID     *string `json:"parentId"`
}

// newTask creates a task of the type (Task when empty) on the team as the member.
func newTask(token, teamID, title, typ string) task {
	GinkgoHelper()
	body := map[string]any{"teamId": teamID, "title": title, "description": "d"}
	if typ != "" {
		body["type"] = typ
	}
	var t task
	ok("POST", "/api/orgboard/tasks", token, body, &t)
	return t
}

// move moves the task and answers the response.
func move(token, taskID, status string) testkit.Response {
	GinkgoHelper()
	return client.Do("PATCH", "/api/orgboard/tasks/"+taskID+"/move", token, map[string]any{"status": status})
}

// newSeat opens a seat with the role on the team (as the crew's Owner).
func newSeat(c crew, teamID, role string) string {
	GinkgoHelper()
	var s idOf
	ok("POST", "/api/orgboard/seats", c.Owner.Token, map[string]any{"teamId": teamID, "roleName": role}, &s)
	return s.ID
}

// newAISeat opens a seat with the role and configures an agent on it; it returns the seat and
// agent ids.
func newAISeat(c crew, teamID, role string) (seatID, agentID string) {
	GinkgoHelper()
	seatID = newSeat(c, teamID, role)
	var a idOf
	ok("POST", "/api/orgboard/seats/"+seatID+"/agent", c.Owner.Token, map[string]any{"name": role + " bot", "apiConfigId": ownModel(c)}, &a)
	return seatID, a.ID
}

// ownModel registers a model connection of the crew's organization (nothing answers at its
// address) and returns its id.
func ownModel(c crew) string {
	GinkgoHelper()
	return newConnection(c, "http://127.0.0.1:9/v1", "sk-fixture-0123456789")
}

// count runs a counting query.
func count(query string, args ...any) int {
	GinkgoHelper()
	var n int
	Expect(db.Raw(query, args...).Scan(&n).Error).To(Succeed())
	return n
}

// roles are the four callers of the capability matrix.
var roles = []string{"Owner", "TeamOwner", "Member", "Stranger"}

// expectMatrix calls do as each role and expects 200 from the allowed ones and an empty 403
// from the others.
func expectMatrix(c crew, allowed []string, do func(token string) testkit.Response) {
	GinkgoHelper()
	for _, role := range roles {
		r := do(c.as(role))
		if slices.Contains(allowed, role) {
			Expect(r.Status).To(Equal(http.StatusOK), "%s: %s", role, r.Body)
		} else {
			Expect(r.Status).To(Equal(http.StatusForbidden), "%s: %s", role, r.Body)
			Expect(r.Body).To(BeEmpty())
		}
	}
}

var (
	ownerOnly  = []string{"Owner"}
	configurer = []string{"Owner", "TeamOwner"}
	anyMember  = []string{"Owner", "TeamOwner", "Member"}
)
