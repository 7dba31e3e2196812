package app_test

import (
	"net/http"
	"sync"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
)

// profileDoc is a profile document; published ones carry a role and a golden test.
func profileDoc(profileKey, version string, published bool) string {
	doc := "---\nprofileKey: " + profileKey + "\nname: Profile " + profileKey + "\nversion: \"" + version + "\"\nsummary: Works.\n"
	if published {
		doc += "roles: [qa]\ngoldenTests:\n  - input: in\n    expected: out\n"
	}
	return doc + "---\n# Operating guide\n\nBe careful.\n"
}

func profiles(r testkit.Response) []skillRow { return skills(r) }

var _ = Describe("the seeded agent profiles", func() {
	It("offers product owner, QA and backend as free shared Published profiles, seeded once even when replicas start together", func() {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				defer GinkgoRecover()
				startApp(func(*config.Config) {})
			})
		}
		wg.Wait()
		u := newUser()
		for _, k := range []string{"product-owner", "qa", "backend"} {
			rows := profiles(client.Do("GET", "/api/orgboard/agent-profiles/"+k, u.Token, nil))
			Expect(rows).To(HaveLen(1), k)
			Expect(rows[0].Origin).To(Equal("Builtin"))
			Expect(rows[0].Status).To(Equal("Published"))
			Expect(rows[0].OrganizationID).To(BeNil())
			Expect(rows[0].Body).To(HavePrefix("# "))
		}
	})
})

var _ = Describe("configuring an agent with an agent profile", func() {
	It("makes the resolved profile's body the agent's persona and records its version", func() {
		c := newCrew()
		seatID, conn := newSeat(c, newTeam(c), "QA"), ownModel(c)
		r := client.Do("POST", "/api/orgboard/seats/"+seatID+"/agent", c.Owner.Token, map[string]any{
			"name": "QA bot", "apiConfigId": conn, "persona": "ignored", "agentProfileKey": "qa",
		})
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var agent struct{ Persona, AgentProfileKey, AgentProfileVersion string }
		r.JSON(&agent)
		qa := profiles(client.Do("GET", "/api/orgboard/agent-profiles/qa", c.Owner.Token, nil))[0]
		Expect(agent.Persona).To(Equal(qa.Body))
		Expect(agent.AgentProfileKey).To(Equal("qa"))
		Expect(agent.AgentProfileVersion).To(Equal("1.0.0"))

		By("the organization's own version resolves first")
		doc := "---\nprofileKey: qa\nname: Our QA\nversion: \"0.9\"\nroles: [qa]\ngoldenTests:\n  - input: a\n    expected: b\n---\nOur way.\n"
		Expect(client.Do("POST", "/api/orgboard/agent-profiles", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "content": doc}).Status).To(Equal(http.StatusOK))
		r = client.Do("POST", "/api/orgboard/seats/"+seatID+"/agent", c.Owner.Token, map[string]any{"name": "QA bot", "apiConfigId": conn, "agentProfileKey": "qa"})
		r.JSON(&agent)
		Expect(agent.Persona).To(Equal("Our way.\n"))
		Expect(agent.AgentProfileVersion).To(Equal("0.9"))
	})

	It("answers Agent profile not found. for an unknown profile or version", func() {
		c := newCrew()
		seatID, conn := newSeat(c, newTeam(c), "QA"), ownModel(c)
		for _, body := range []map[string]any{
			{"name": "bot", "apiConfigId": conn, "agentProfileKey": key("nope")},
			{"name": "bot", "apiConfigId": conn, "agentProfileKey": "qa", "agentProfileVersion": "9.9"},
		} {
			r := client.Do("POST", "/api/orgboard/seats/"+seatID+"/agent", c.Owner.Token, body)
			Expect(r.Status).To(Equal(http.StatusNotFound))
			Expect(string(r.Body)).To(Equal("Agent profile not found."))
		}
	})
})

var _ = Describe("agent profiles", func() {
	base := "/api/orgboard/agent-profiles"
	upload := func(token, orgID, content string) testkit.Response {
		return client.Do("POST", base, token, map[string]any{"organizationId": orgID, "content": content})
	}

	It("uploads, lists, forks, publishes, lists on the marketplace, installs once and unpublishes, with audit records", func() {
		c, buyer := newCrew(), newCrew()
		k := key("reviewer")
		r := upload(c.TeamOwner.Token, c.OrgID, profileDoc(k, "1.0", true))
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var p skillRow
		r.JSON(&p)
		Expect(p.ProfileKey).To(Equal(k))
		Expect(p.Origin).To(Equal("Authored"))
		Expect(p.Status).To(Equal("Published"))
		Expect(p.Visibility).To(Equal("PrivateToOrg"))
		Expect(p.Body).To(Equal("# Operating guide\n\nBe careful.\n"))
		Expect(auditActions(c.OrgID)[0]).To(Equal("agent_profile.authored"))

		rows := profiles(client.Do("GET", base+"?organizationId="+c.OrgID+"&pageSize=100", c.Member.Token, nil))
		Expect(rows).To(ContainElement(HaveField("ProfileKey", k)))
		Expect(rows).To(ContainElement(HaveField("ProfileKey", "qa")))

		r = client.Do("POST", base+"/qa/fork", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "version": "1.0.0", "name": "Our QA"})
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		Expect(auditActions(c.OrgID)[0]).To(Equal("agent_profile.forked"))
		versions := profiles(client.Do("GET", base+"/qa?organizationId="+c.OrgID, c.Member.Token, nil))
		Expect(versions).To(HaveLen(2))
		Expect(versions[0].Name).To(Equal("Our QA"), "the organization's own version resolves before the shared one")

		r = client.Do("POST", base+"/"+k+"/publish", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "version": "1.0"})
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		Expect(auditActions(c.OrgID)[0]).To(Equal("agent_profile.published"))
		var listed *skillRow
		for _, row := range profiles(client.Do("GET", base+"/marketplace?organizationId="+buyer.OrgID+"&pageSize=100", buyer.Member.Token, nil)) {
			if row.ProfileKey == k {
				listed = &row
			}
		}
		Expect(listed).NotTo(BeNil())
		Expect(listed.AlreadyInLibrary).To(BeFalse())

		install := func() int {
			return client.Do("POST", base+"/install", buyer.Owner.Token, map[string]any{"organizationId": buyer.OrgID, "profileId": listed.ID}).Status
		}
		Expect(install()).To(Equal(http.StatusOK))
		Expect(auditActions(buyer.OrgID)[0]).To(Equal("agent_profile.installed"))
		Expect(install()).To(Equal(http.StatusConflict))

		r = client.Do("POST", base+"/"+k+"/unpublish", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "version": "1.0"})
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(auditActions(c.OrgID)[0]).To(Equal("agent_profile.unpublished"))
	})

	It("answers the messages of blank content, a malformed document, a duplicate and an unknown key", func() {
		c := newCrew()
		r := upload(c.Owner.Token, c.OrgID, "")
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("content is required."))
		r = upload(c.Owner.Token, c.OrgID, "no header")
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal(`Malformed document: line 1: the document must start with a "---" line that opens its front matter.`))
		k := key("dup")
		Expect(upload(c.Owner.Token, c.OrgID, profileDoc(k, "1", false)).Status).To(Equal(http.StatusOK))
		r = upload(c.Owner.Token, c.OrgID, profileDoc(k, "1", true))
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(string(r.Body)).To(Equal("This organization already has agent profile " + k + " version 1."))
		r = client.Do("GET", base+"/"+key("nope")+"?organizationId="+c.OrgID, c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Agent profile not found."))
	})

	DescribeTable("authoring needs ConfigureAgents, browsing ViewBoard",
		func(role string, manage, browse int) {
			c := newCrew()
			Expect(upload(c.as(role), c.OrgID, profileDoc(key("cap"), "1", true)).Status).To(Equal(manage))
			Expect(client.Do("GET", base+"?organizationId="+c.OrgID, c.as(role), nil).Status).To(Equal(browse))
			Expect(client.Do("GET", base+"/marketplace?organizationId="+c.OrgID, c.as(role), nil).Status).To(Equal(browse))
		},
		Entry("Owner", "Owner", http.StatusOK, http.StatusOK), Entry("TeamOwner", "TeamOwner", http.StatusOK, http.StatusOK),
		Entry("Member", "Member", http.StatusForbidden, http.StatusOK), Entry("stranger", "Stranger", http.StatusForbidden, http.StatusForbidden),
	)
})

var _ = Describe("product profiles", func() {
	base := "/api/orgboard/product-profiles"

	It("uploads, publishes and installs like the other libraries, with product_profile audit records", func() {
		c, buyer := newCrew(), newCrew()
		k := key("brief")
		r := client.Do("POST", base, c.Owner.Token, map[string]any{"organizationId": c.OrgID, "content": profileDoc(k, "1", true)})
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		Expect(auditActions(c.OrgID)[0]).To(Equal("product_profile.authored"))
		r = client.Do("POST", base+"/"+k+"/publish", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "version": "1"})
		Expect(r.Status).To(Equal(http.StatusOK))
		var rows []skillRow
		for _, row := range profiles(client.Do("GET", base+"/marketplace?organizationId="+buyer.OrgID+"&pageSize=100", buyer.Owner.Token, nil)) {
			if row.ProfileKey == k {
				rows = append(rows, row)
			}
		}
		Expect(rows).To(HaveLen(1))
		r = client.Do("POST", base+"/install", buyer.Owner.Token, map[string]any{"organizationId": buyer.OrgID, "profileId": rows[0].ID})
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(auditActions(buyer.OrgID)[0]).To(Equal("product_profile.installed"))
		r = client.Do("GET", base+"/"+key("nope")+"?organizationId="+c.OrgID, c.Owner.Token, nil)
		Expect(string(r.Body)).To(Equal("Product profile not found."))
	})

	It("applies a profile version to a product: the product's identity becomes the profile's body", func() {
		c, other := newCrew(), newCrew()
		k := key("apply")
		Expect(client.Do("POST", base, c.Owner.Token, map[string]any{"organizationId": c.OrgID, "content": profileDoc(k, "1", true)}).Status).To(Equal(http.StatusOK))
		product, foreign := uuid.NewString(), uuid.NewString()
		Expect(db.Exec(`INSERT INTO products (id, organization_id, name, kind) VALUES (?, ?, 'Shop', 'Product'), (?, ?, 'Theirs', 'Product')`,
			product, c.OrgID, foreign, other.OrgID).Error).To(Succeed())
		apply := func(token, productID, version string) testkit.Response {
			return client.Do("POST", base+"/"+k+"/apply", token, map[string]any{"organizationId": c.OrgID, "version": version, "productId": productID})
		}
		r := apply(c.Owner.Token, product, "1")
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var identity string
		Expect(db.Raw(`SELECT identity FROM products WHERE id = ?`, product).Scan(&identity).Error).To(Succeed())
		Expect(identity).To(Equal("# Operating guide\n\nBe careful.\n"))
		Expect(auditActions(c.OrgID)[0]).To(Equal("product_profile.applied"))

		for _, id := range []string{foreign, uuid.NewString()} {
			r = apply(c.Owner.Token, id, "1")
			Expect(r.Status).To(Equal(http.StatusNotFound))
			Expect(string(r.Body)).To(Equal("Product not found."))
		}
		r = apply(c.Owner.Token, product, "2")
		Expect(string(r.Body)).To(Equal("Product profile not found."))
		Expect(apply(c.TeamOwner.Token, product, "1").Status).To(Equal(http.StatusForbidden))
	})

	DescribeTable("every operation is owner-level",
		func(role string, status int) {
			c := newCrew()
			Expect(client.Do("POST", base, c.as(role), map[string]any{"organizationId": c.OrgID, "content": profileDoc(key("o"), "1", true)}).Status).To(Equal(status))
			Expect(client.Do("GET", base+"?organizationId="+c.OrgID, c.as(role), nil).Status).To(Equal(status))
			Expect(client.Do("GET", base+"/marketplace?organizationId="+c.OrgID, c.as(role), nil).Status).To(Equal(status))
		},
		Entry("Owner", "Owner", http.StatusOK), Entry("TeamOwner", "TeamOwner", http.StatusForbidden),
		Entry("Member", "Member", http.StatusForbidden), Entry("stranger", "Stranger", http.StatusForbidden),
	)
})
