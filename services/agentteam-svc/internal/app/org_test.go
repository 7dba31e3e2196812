package app_test

import (
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("organizations", func() {
	It("creates an organization with a new id and makes the caller its Owner", func() {
		owner := newUser()
		id := uuid.NewString()
		r := client.Do("POST", "/api/orgboard/organizations", owner.Token, map[string]any{"organizationId": id, "name": "Initech"})
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(r.Body).To(MatchJSON(`{"id":"` + id + `","name":"Initech"}`))

		r = client.Do("GET", "/api/orgboard/organizations", owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(r.Body).To(MatchJSON(`[{"id":"` + id + `","name":"Initech","role":"Owner"}]`))
		Expect(auditActions(id)).To(Equal([]string{"organization.created"}))
	})

	It("renames an existing organization for its Owner", func() {
		owner := newUser()
		id := newOrg(owner)
		r := client.Do("POST", "/api/orgboard/organizations", owner.Token, map[string]any{"organizationId": id, "name": "Renamed"})
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(r.Body).To(MatchJSON(`{"id":"` + id + `","name":"Renamed"}`))
		Expect(auditActions(id)).To(Equal([]string{"organization.renamed", "organization.created"}))
	})

	DescribeTable("refuses a rename without CreateProductsAndTeams with an empty 403",
		func(role string) {
			c := newCrew()
			r := client.Do("POST", "/api/orgboard/organizations", c.as(role), map[string]any{"organizationId": c.OrgID, "name": "Mine now"})
			Expect(r.Status).To(Equal(http.StatusForbidden))
			Expect(r.Body).To(BeEmpty())
			var name string
			Expect(db.Raw(`SELECT name FROM organizations WHERE id = ?`, c.OrgID).Scan(&name).Error).To(Succeed())
			Expect(name).NotTo(Equal("Mine now"))
		},
		Entry("a TeamOwner", "TeamOwner"),
		Entry("a Member", "Member"),
		Entry("a stranger", "Stranger"),
	)

	It("refuses a blank name with the spec's message", func() {
		r := client.Do("POST", "/api/orgboard/organizations", newUser().Token, map[string]any{"organizationId": uuid.NewString(), "name": "  "})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("Name is required."))
	})

	It("refuses a name with a NUL byte or over 200 characters", func() {
		for _, name := range []string{"a\u0000b", string(make([]rune, 201))} {
			r := client.Do("POST", "/api/orgboard/organizations", newUser().Token, map[string]any{"organizationId": uuid.NewString(), "name": name})
			Expect(r.Status).To(Equal(http.StatusBadRequest))
		}
	})

	It("answers 401 with an empty body without a token and 403 to a service token", func() {
		body := map[string]any{"organizationId": uuid.NewString(), "name": "x"}
		r := client.Do("POST", "/api/orgboard/organizations", "", body)
		Expect(r.Status).To(Equal(http.StatusUnauthorized))
		Expect(r.Body).To(BeEmpty())
		r = client.Do("POST", "/api/orgboard/organizations", tokens.ServiceToken("render"), body)
		Expect(r.Status).To(Equal(http.StatusForbidden))
		Expect(r.Body).To(BeEmpty())
	})
})

var _ = Describe("invitations and the member directory", func() {
	It("lets the invited member join with the invitation's role, once", func() {
		owner := newUser()
		orgID := newOrg(owner)
		r := client.Do("POST", "/api/orgboard/invitations", owner.Token, map[string]any{"organizationId": orgID, "role": "Member"})
		Expect(r.Status).To(Equal(http.StatusOK))
		var inv map[string]any
		r.JSON(&inv)
		Expect(inv).To(HaveKeyWithValue("status", "Pending"))
		Expect(inv).To(HaveKeyWithValue("role", "Member"))
		Expect(inv).To(HaveKeyWithValue("invitedBy", owner.ID))
		token, _ := inv["joinToken"].(string)
		Expect(token).To(HavePrefix("join_"))

		m := newUser()
		r = client.Do("POST", "/api/orgboard/invitations/accept", m.Token, map[string]any{"joinToken": token})
		Expect(r.Status).To(Equal(http.StatusOK))
		var member map[string]any
		r.JSON(&member)
		Expect(member).To(HaveKeyWithValue("memberId", m.ID))
		Expect(member).To(HaveKeyWithValue("role", "Member"))

		r = client.Do("POST", "/api/orgboard/invitations/accept", newUser().Token, map[string]any{"joinToken": token})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Invitation not found."))

		r = client.Do("GET", "/api/orgboard/members?organizationId="+orgID, m.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var members []map[string]any
		r.JSON(&members)
		Expect(members).To(HaveLen(2))
		Expect(members[0]).To(HaveKeyWithValue("memberId", owner.ID))
		Expect(members[0]).To(HaveKeyWithValue("role", "Owner"))
		Expect(members[1]).To(HaveKeyWithValue("memberId", m.ID))

		r = client.Do("GET", "/api/orgboard/invitations?organizationId="+orgID, owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var list []map[string]any
		r.JSON(&list)
		Expect(list).To(HaveLen(1))
		Expect(list[0]).To(HaveKeyWithValue("status", "Accepted"))
		Expect(list[0]).To(HaveKeyWithValue("joinToken", BeNil()))
		Expect(list[0]).To(HaveKeyWithValue("acceptedBy", m.ID))
		Expect(auditActions(orgID)[:2]).To(Equal([]string{"invitation.accepted", "invitation.created"}))
	})

	It("answers 409 when the caller already belongs to the organization", func() {
		c := newCrew()
		r := client.Do("POST", "/api/orgboard/invitations", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "role": "Owner"})
		var inv struct{ JoinToken string }
		r.JSON(&inv)
		r = client.Do("POST", "/api/orgboard/invitations/accept", c.Member.Token, map[string]any{"joinToken": inv.JoinToken})
		Expect(r.Status).To(Equal(http.StatusConflict))
		var role string
		Expect(db.Raw(`SELECT role FROM memberships WHERE organization_id = ? AND member_id = ?`, c.OrgID, c.Member.ID).Scan(&role).Error).To(Succeed())
		Expect(role).To(Equal("Member"))
	})

	It("refuses an expired join token", func() {
		c := newCrew()
		r := client.Do("POST", "/api/orgboard/invitations", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "role": "Member"})
		var inv struct{ ID, JoinToken string }
		r.JSON(&inv)
		Expect(db.Exec(`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = ?`, inv.ID).Error).To(Succeed())
		r = client.Do("POST", "/api/orgboard/invitations/accept", newUser().Token, map[string]any{"joinToken": inv.JoinToken})
		Expect(r.Status).To(Equal(http.StatusNotFound))
	})

	It("lists only the caller's own invitations", func() {
		c := newCrew()
		other := join(c.Owner, c.OrgID, "Owner")
		r := client.Do("GET", "/api/orgboard/invitations?organizationId="+c.OrgID, other.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(r.Body).To(MatchJSON(`[]`))
	})

	It("refuses an unknown role and a blank token with a message", func() {
		c := newCrew()
		r := client.Do("POST", "/api/orgboard/invitations", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "role": "Admin"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("role must be Owner, TeamOwner or Member."))
		r = client.Do("POST", "/api/orgboard/invitations/accept", c.Member.Token, map[string]any{"joinToken": ""})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("joinToken is required."))
	})

	DescribeTable("the capability matrix",
		func(method, path string, body func(c crew) map[string]any, allowed ...string) {
			for _, role := range []string{"Owner", "TeamOwner", "Member", "Stranger"} {
				c := newCrew()
				var b any
				if body != nil {
					b = body(c)
				}
				r := client.Do(method, strings.ReplaceAll(path, "{org}", c.OrgID), c.as(role), b)
				if slices.Contains(allowed, role) {
					Expect(r.Status).To(Equal(http.StatusOK), role)
				} else {
					Expect(r.Status).To(Equal(http.StatusForbidden), role)
					Expect(r.Body).To(BeEmpty())
				}
			}
		},
		Entry("list members", "GET", "/api/orgboard/members?organizationId={org}", nil, "Owner", "TeamOwner", "Member"),
		Entry("list invitations", "GET", "/api/orgboard/invitations?organizationId={org}", nil, "Owner"),
		Entry("invite", "POST", "/api/orgboard/invitations", func(c crew) map[string]any {
			return map[string]any{"organizationId": c.OrgID, "role": "Member"}
		}, "Owner"),
		Entry("rename the organization", "POST", "/api/orgboard/organizations", func(c crew) map[string]any {
			return map[string]any{"organizationId": c.OrgID, "name": "Renamed"}
		}, "Owner"),
	)
})
