package app_test

import (
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Fixtures shared by the agent-team specs. Every spec makes its own organizations and members
// with fresh ids, so specs never see each other's rows and need no truncation.

// user is a member with a valid access token.
type user struct {
	ID    string
	Token string
}

// newUser returns a member id with a user token for it.
func newUser() user {
	id := uuid.NewString()
	return user{ID: id, Token: tokens.UserToken(id, uuid.NewString(), false)}
}

// newOrg creates an organization whose Owner is owner and returns its id.
func newOrg(owner user) string {
	GinkgoHelper()
	id := uuid.NewString()
	r := client.Do("POST", "/api/orgboard/organizations", owner.Token, map[string]any{"organizationId": id, "name": "Org " + id[:8]})
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	return id
}

// join makes a new member with the role in the organization (invited by owner) and returns it.
func join(owner user, orgID, role string) user {
	GinkgoHelper()
	r := client.Do("POST", "/api/orgboard/invitations", owner.Token, map[string]any{"organizationId": orgID, "role": role})
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	var inv struct{ JoinToken string }
	r.JSON(&inv)
	m := newUser()
	r = client.Do("POST", "/api/orgboard/invitations/accept", m.Token, map[string]any{"joinToken": inv.JoinToken})
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	return m
}

// crew is an organization with an Owner, a TeamOwner, a Member and a stranger (no role in it).
type crew struct {
	OrgID                              string
	Owner, TeamOwner, Member, Stranger user
}

func newCrew() crew {
	GinkgoHelper()
	c := crew{Owner: newUser(), Stranger: newUser()}
	c.OrgID = newOrg(c.Owner)
	c.TeamOwner = join(c.Owner, c.OrgID, "TeamOwner")
	c.Member = join(c.Owner, c.OrgID, "Member")
	return c
}

// as returns the token of the named role of the crew: Owner, TeamOwner, Member or Stranger.
func (c crew) as(role string) string {
	switch role {
	case "Owner":
		return c.Owner.Token
	case "TeamOwner":
		return c.TeamOwner.Token
	case "Member":
		return c.Member.Token
	default:
		return c.Stranger.Token
	}
}

// auditActions lists the organization's audit actions, newest first, straight from the table.
func auditActions(orgID string) []string {
	GinkgoHelper()
	var actions []string
	Expect(db.Raw(`SELECT action FROM audit_records WHERE organization_id = ? ORDER BY created_at DESC, id DESC`, orgID).
		Scan(&actions).Error).To(Succeed())
	return actions
}
