package app_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
)

// keysOf lists the rows' key@version@origin in order.
func keysOf(rows []skillRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		owner := "shared"
		if r.OrganizationID != nil {
			owner = "own"
		}
		out[i] = r.SkillKey + "@" + r.Version + "/" + owner + "/" + r.Status
	}
	return out
}

var _ = Describe("authoring a skill", func() {
	It("stores a private Authored skill, Published with a role and a golden test, and audits it", func() {
		c := newCrew()
		k := key("triage")
		s := author(c.Owner.Token, authored(c.OrgID, k, "1.0", true))
		Expect(s.SkillKey).To(Equal(k))
		Expect(s.Origin).To(Equal("Authored"))
		Expect(s.Status).To(Equal("Published"))
		Expect(s.Visibility).To(Equal("PrivateToOrg"))
		Expect(*s.OrganizationID).To(Equal(c.OrgID))
		Expect(s.GoldenTestCount).To(Equal(1))
		Expect(auditActions(c.OrgID)[0]).To(Equal("skill.authored"))
	})

	It("keeps a skill without golden tests a private Draft, even when it asks to be Public", func() {
		c := newCrew()
		req := authored(c.OrgID, key("draft"), "1.0", false)
		req["visibility"] = "Public"
		s := author(c.Owner.Token, req)
		Expect(s.Status).To(Equal("Draft"))
		Expect(s.Visibility).To(Equal("PrivateToOrg"))
	})

	DescribeTable("refuses a missing key, name, version or body with the spec's message",
		func(field string) {
			c := newCrew()
			req := authored(c.OrgID, key("blank"), "1.0", true)
			req[field] = "  "
			r := client.Do("POST", "/api/skills/authored", c.Owner.Token, req)
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(string(r.Body)).To(Equal("skillKey, name, version, and body are required."))
		},
		Entry("skillKey", "skillKey"), Entry("name", "name"), Entry("version", "version"), Entry("body", "body"),
	)

	It("refuses a key that breaks the key rule", func() {
		c := newCrew()
		r := client.Do("POST", "/api/skills/authored", c.Owner.Token, authored(c.OrgID, "Bad_Key", "1", true))
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("skillKey must be 1-64 lower-case letters, digits and single hyphens, without a leading or trailing hyphen."))
	})

	It("answers 409 for a key and version the organization already has", func() {
		c := newCrew()
		k := key("dup")
		author(c.Owner.Token, authored(c.OrgID, k, "1.0", true))
		r := client.Do("POST", "/api/skills/authored", c.Owner.Token, authored(c.OrgID, k, "1.0", false))
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(string(r.Body)).To(Equal("This organization already has skill " + k + " version 1.0."))
	})

	DescribeTable("needs ManageSkills",
		func(role string, status int) {
			c := newCrew()
			r := client.Do("POST", "/api/skills/authored", c.as(role), authored(c.OrgID, key("cap"), "1", true))
			Expect(r.Status).To(Equal(status))
			if status == http.StatusForbidden {
				Expect(r.Body).To(BeEmpty())
			}
		},
		Entry("Owner", "Owner", http.StatusOK), Entry("TeamOwner", "TeamOwner", http.StatusOK),
		Entry("Member", "Member", http.StatusForbidden), Entry("stranger", "Stranger", http.StatusForbidden),
	)

	It("refuses an anonymous caller with 401", func() {
		Expect(client.Do("POST", "/api/skills/authored", "", map[string]any{}).Status).To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("listing skills and the versions of a key", func() {
	It("lists shared and own skills by key, and per key in the order a run resolves them", func() {
		c := newCrew()
		admin := startApp(withAdminKey)
		role := key("role")
		a, b := "a-"+role, "b-"+role
		index := func(k, version string, published bool) {
			doc := strings.Replace(document(k, version, published, ""), "roles: [qa]", "roles: ["+role+"]", 1)
			if !published {
				doc = strings.Replace(doc, "summary:", "roles: ["+role+"]\nsummary:", 1)
			}
			r := admin.Do("POST", "/api/skills/index", c.Owner.Token, map[string]any{"content": doc}, "X-Skills-Admin-Key", adminKey)
			Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		}
		own := func(k, version string, published bool) {
			req := authored(c.OrgID, k, version, published)
			req["roles"] = []string{role}
			author(c.Owner.Token, req)
		}
		index(a, "3.0", true)
		index(a, "9.0", false)
		own(a, "1.0", true)
		own(a, "10.0", true)
		own(a, "11.0", false)
		index(b, "1.0", true)

		rows := skills(client.Do("GET", "/api/skills?organizationId="+c.OrgID+"&role="+role, c.Member.Token, nil))
		Expect(keysOf(rows)).To(Equal([]string{
			a + "@10.0/own/Published", a + "@1.0/own/Published", a + "@3.0/shared/Published",
			a + "@11.0/own/Draft", a + "@9.0/shared/Draft", b + "@1.0/shared/Published",
		}))

		versions := skills(client.Do("GET", "/api/skills/"+a+"?organizationId="+c.OrgID, c.Member.Token, nil))
		Expect(keysOf(versions)).To(Equal(keysOf(rows[:5])))
		Expect(versions[0].Body).To(ContainSubstring("# " + a))

		By("without an organization only the shared skills")
		shared := skills(client.Do("GET", "/api/skills?role="+role, c.Stranger.Token, nil))
		Expect(keysOf(shared)).To(Equal([]string{a + "@3.0/shared/Published", a + "@9.0/shared/Draft", b + "@1.0/shared/Published"}))
	})

	It("filters by visibility case-insensitively and ignores an unknown visibility", func() {
		c := newCrew()
		role := key("vis")
		for _, v := range []string{"1", "2"} {
			req := authored(c.OrgID, key("v"), v, true)
			req["roles"] = []string{role}
			author(c.Owner.Token, req)
		}
		base := "/api/skills?organizationId=" + c.OrgID + "&role=" + role
		Expect(skills(client.Do("GET", base+"&visibility=privatetoorg", c.Owner.Token, nil))).To(HaveLen(2))
		Expect(skills(client.Do("GET", base+"&visibility=PUBLIC", c.Owner.Token, nil))).To(BeEmpty())
		Expect(skills(client.Do("GET", base+"&visibility=secret", c.Owner.Token, nil))).To(HaveLen(2))
	})

	It("shows a change at once, though pages are kept in memory until the library changes", func() {
		c := newCrew()
		role := key("fresh")
		list := func() []string {
			return keysOf(skills(client.Do("GET", "/api/skills?organizationId="+c.OrgID+"&role="+role, c.Member.Token, nil)))
		}
		req := authored(c.OrgID, key("first"), "1", true)
		req["roles"] = []string{role}
		first := author(c.Owner.Token, req)
		Expect(list()).To(Equal([]string{first.SkillKey + "@1/own/Published"}))
		Expect(list()).To(Equal([]string{first.SkillKey + "@1/own/Published"}), "served again")
		req["version"] = "2"
		author(c.Owner.Token, req)
		Expect(list()).To(Equal([]string{first.SkillKey + "@2/own/Published", first.SkillKey + "@1/own/Published"}))
	})

	It("answers Skill not found. for an unknown key", func() {
		c := newCrew()
		r := client.Do("GET", "/api/skills/"+key("nope")+"?organizationId="+c.OrgID, c.Member.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Skill not found."))
	})

	It("does not show an organization's skills to another organization", func() {
		c, other := newCrew(), newCrew()
		k := key("mine")
		author(c.Owner.Token, authored(c.OrgID, k, "1", true))
		r := client.Do("GET", "/api/skills/"+k+"?organizationId="+other.OrgID, other.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
	})

	DescribeTable("needs ViewBoard on the organization",
		func(role string, status int) {
			c := newCrew()
			k := key("view")
			author(c.Owner.Token, authored(c.OrgID, k, "1", true))
			Expect(client.Do("GET", "/api/skills?organizationId="+c.OrgID, c.as(role), nil).Status).To(Equal(status))
			Expect(client.Do("GET", "/api/skills/"+k+"?organizationId="+c.OrgID, c.as(role), nil).Status).To(Equal(status))
		},
		Entry("Owner", "Owner", http.StatusOK), Entry("TeamOwner", "TeamOwner", http.StatusOK),
		Entry("Member", "Member", http.StatusOK), Entry("stranger", "Stranger", http.StatusForbidden),
	)

	It("routes the fixed paths before the key", func() {
		c := newCrew()
		Expect(client.Do("GET", "/api/skills/ping", "", nil).Status).To(Equal(http.StatusOK))
		Expect(skills(client.Do("GET", "/api/skills/marketplace?organizationId="+c.OrgID, c.Member.Token, nil))).NotTo(BeNil())
	})
})

var _ = Describe("forking a skill", func() {
	It("copies a shared version into the organization as a private Authored skill with its golden tests", func() {
		c := newCrew()
		admin := startApp(withAdminKey)
		k := key("fork")
		Expect(admin.Do("POST", "/api/skills/index", c.Owner.Token, map[string]any{"content": document(k, "1.0", true, "")},
			"X-Skills-Admin-Key", adminKey).Status).To(Equal(http.StatusOK))
		r := client.Do("POST", "/api/skills/"+k+"/fork", c.TeamOwner.Token, map[string]any{"organizationId": c.OrgID, "version": "1.0", "name": "Our fork"})
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var s skillRow
		r.JSON(&s)
		Expect(s.Name).To(Equal("Our fork"))
		Expect(s.Origin).To(Equal("Authored"))
		Expect(s.Visibility).To(Equal("PrivateToOrg"))
		Expect(*s.OrganizationID).To(Equal(c.OrgID))
		Expect(s.GoldenTests).To(Equal([]map[string]string{{"input": "in", "expected": "out"}}))
		Expect(auditActions(c.OrgID)[0]).To(Equal("skill.forked"))

		By("a second fork of the same version conflicts")
		r = client.Do("POST", "/api/skills/"+k+"/fork", c.TeamOwner.Token, map[string]any{"organizationId": c.OrgID, "version": "1.0"})
		Expect(r.Status).To(Equal(http.StatusConflict))
	})

	It("answers Skill not found. for an unknown key or version, and for another organization's skill", func() {
		c, other := newCrew(), newCrew()
		k := key("theirs")
		author(other.Owner.Token, authored(other.OrgID, k, "1", true))
		for _, v := range []string{"1", "2"} {
			r := client.Do("POST", "/api/skills/"+k+"/fork", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "version": v})
			Expect(r.Status).To(Equal(http.StatusNotFound))
			Expect(string(r.Body)).To(Equal("Skill not found."))
		}
	})

	DescribeTable("needs ManageSkills",
		func(role string, status int) {
			c := newCrew()
			k := key("fcap")
			author(c.Owner.Token, authored(c.OrgID, k, "1", true))
			r := client.Do("POST", "/api/skills/"+k+"/fork", c.as(role), map[string]any{"organizationId": c.OrgID, "version": "1"})
			Expect(r.Status).To(Equal(status))
		},
		Entry("Owner (own version conflicts)", "Owner", http.StatusConflict), Entry("TeamOwner", "TeamOwner", http.StatusConflict),
		Entry("Member", "Member", http.StatusForbidden), Entry("stranger", "Stranger", http.StatusForbidden),
	)
})

var _ = Describe("versioned operations", func() {
	DescribeTable("answer version is required. without a version",
		func(path string) {
			c := newCrew()
			r := client.Do("POST", path, c.Owner.Token, map[string]any{"organizationId": c.OrgID, "version": " ", "productId": uuid.NewString()})
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(string(r.Body)).To(Equal("version is required."))
		},
		Entry("fork", "/api/skills/some-skill/fork"), Entry("publish", "/api/skills/some-skill/publish"),
		Entry("unpublish", "/api/skills/some-skill/unpublish"), Entry("agent profile fork", "/api/orgboard/agent-profiles/qa/fork"),
		Entry("product profile apply", "/api/orgboard/product-profiles/brief/apply"),
	)

	DescribeTable("refuse an anonymous caller with an empty 401",
		func(method, path string) {
			r := client.Do(method, path, "", map[string]any{})
			Expect(r.Status).To(Equal(http.StatusUnauthorized))
			Expect(r.Body).To(BeEmpty())
		},
		Entry("list", "GET", "/api/skills"), Entry("versions", "GET", "/api/skills/a"),
		Entry("marketplace", "GET", "/api/skills/marketplace?organizationId="+uuid.NewString()),
		Entry("install", "POST", "/api/skills/install"), Entry("index", "POST", "/api/skills/index"),
		Entry("sync", "POST", "/api/skills/sync"), Entry("agent profiles", "GET", "/api/orgboard/agent-profiles"),
		Entry("product profiles", "POST", "/api/orgboard/product-profiles"),
	)
})

var _ = Describe("the skill marketplace", func() {
	var seller, buyer crew
	var k string

	BeforeEach(func() {
		seller, buyer = newCrew(), newCrew()
		k = key("market")
		author(seller.Owner.Token, authored(seller.OrgID, k, "1.0", true))
	})

	publish := func(token, orgID, action, version string) (int, string) {
		r := client.Do("POST", "/api/skills/"+k+"/"+action, token, map[string]any{"organizationId": orgID, "version": version})
		return r.Status, string(r.Body)
	}
	listing := func(orgID, token string) *skillRow {
		for _, r := range skills(client.Do("GET", "/api/skills/marketplace?organizationId="+orgID+"&pageSize=100", token, nil)) {
			if r.SkillKey == k {
				return &r
			}
		}
		return nil
	}

	It("lists a published version for other organizations only, flags it once installed, and withdraws it", func() {
		Expect(first(publish(seller.Owner.Token, seller.OrgID, "publish", "1.0"))).To(Equal(http.StatusOK))
		Expect(auditActions(seller.OrgID)[0]).To(Equal("skill.published"))
		Expect(listing(seller.OrgID, seller.Owner.Token)).To(BeNil(), "own skills are excluded")
		row := listing(buyer.OrgID, buyer.Member.Token)
		Expect(row).NotTo(BeNil())
		Expect(row.Visibility).To(Equal("Public"))
		Expect(row.AlreadyInLibrary).To(BeFalse())

		r := client.Do("POST", "/api/skills/install", buyer.TeamOwner.Token, map[string]any{"organizationId": buyer.OrgID, "skillId": row.ID})
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var installed skillRow
		r.JSON(&installed)
		Expect(installed.Origin).To(Equal("Installed"))
		Expect(installed.Visibility).To(Equal("PrivateToOrg"))
		Expect(*installed.OrganizationID).To(Equal(buyer.OrgID))
		Expect(installed.GoldenTestCount).To(Equal(1))
		Expect(auditActions(buyer.OrgID)[0]).To(Equal("skill.installed"))
		Expect(listing(buyer.OrgID, buyer.Member.Token).AlreadyInLibrary).To(BeTrue())

		By("installing it again conflicts and overwrites nothing")
		r = client.Do("POST", "/api/skills/install", buyer.Owner.Token, map[string]any{"organizationId": buyer.OrgID, "skillId": row.ID})
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(string(r.Body)).To(Equal("This organization already has skill " + k + " version 1.0."))

		By("an installed copy cannot be listed")
		status, msg := publish(buyer.Owner.Token, buyer.OrgID, "publish", "1.0")
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(msg).To(Equal("Only a skill the organization authored can be listed."))

		Expect(first(publish(seller.Owner.Token, seller.OrgID, "unpublish", "1.0"))).To(Equal(http.StatusOK))
		Expect(auditActions(seller.OrgID)[0]).To(Equal("skill.unpublished"))
		Expect(listing(buyer.OrgID, buyer.Member.Token)).To(BeNil())
	})

	It("refuses to list a Draft version", func() {
		author(seller.Owner.Token, authored(seller.OrgID, k, "2.0", false))
		status, msg := publish(seller.Owner.Token, seller.OrgID, "publish", "2.0")
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(msg).To(Equal("Only a Published skill can be listed."))
	})

	It("answers Skill not found. when publishing a version the organization does not have", func() {
		for _, action := range []string{"publish", "unpublish"} {
			status, msg := publish(seller.Owner.Token, seller.OrgID, action, "9.9")
			Expect(status).To(Equal(http.StatusNotFound))
			Expect(msg).To(Equal("Skill not found."))
		}
	})

	It("refuses to install the organization's own skill, and an unlisted one", func() {
		s := author(seller.Owner.Token, authored(seller.OrgID, key("own"), "1", true))
		r := client.Do("POST", "/api/skills/install", seller.Owner.Token, map[string]any{"organizationId": seller.OrgID, "skillId": s.ID})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("An organization cannot install its own skill."))
		r = client.Do("POST", "/api/skills/install", buyer.Owner.Token, map[string]any{"organizationId": buyer.OrgID, "skillId": s.ID})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Skill not found."))
		r = client.Do("POST", "/api/skills/install", buyer.Owner.Token, map[string]any{"organizationId": buyer.OrgID, "skillId": uuid.NewString()})
		Expect(r.Status).To(Equal(http.StatusNotFound))
	})

	It("lets one of two racing installs win and answers 409 to the other", func() {
		Expect(first(publish(seller.Owner.Token, seller.OrgID, "publish", "1.0"))).To(Equal(http.StatusOK))
		row := listing(buyer.OrgID, buyer.Owner.Token)
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() {
				defer GinkgoRecover()
				statuses[i] = client.Do("POST", "/api/skills/install", buyer.Owner.Token, map[string]any{"organizationId": buyer.OrgID, "skillId": row.ID}).Status
			})
		}
		wg.Wait()
		Expect(statuses).To(ConsistOf(http.StatusOK, http.StatusConflict))
	})

	DescribeTable("publishing, unpublishing and installing need ManageSkills; browsing needs ViewBoard",
		func(role string, manage, browse, install int) {
			status, _ := publish(seller.as(role), seller.OrgID, "publish", "1.0")
			Expect(status).To(Equal(manage))
			status, _ = publish(seller.as(role), seller.OrgID, "unpublish", "1.0")
			Expect(status).To(Equal(manage))
			Expect(client.Do("GET", "/api/skills/marketplace?organizationId="+seller.OrgID, seller.as(role), nil).Status).To(Equal(browse))
			r := client.Do("POST", "/api/skills/install", seller.as(role), map[string]any{"organizationId": seller.OrgID, "skillId": uuid.NewString()})
			Expect(r.Status).To(Equal(install))
		},
		Entry("Owner", "Owner", http.StatusOK, http.StatusOK, http.StatusNotFound),
		Entry("TeamOwner", "TeamOwner", http.StatusOK, http.StatusOK, http.StatusNotFound),
		Entry("Member", "Member", http.StatusForbidden, http.StatusOK, http.StatusForbidden),
		Entry("stranger", "Stranger", http.StatusForbidden, http.StatusForbidden, http.StatusForbidden),
	)
})

var _ = Describe("indexing shared skills with the admin key", func() {
	It("refuses every index and sync call with an empty 403 when no admin key is configured", func() {
		api := startApp(func(c *config.Config) { c.SkillsAdminKey = ""; c.SkillSource.Dir = GinkgoT().TempDir() })
		u := newUser()
		for _, path := range []string{"/api/skills/index", "/api/skills/sync"} {
			for _, header := range [][]string{nil, {"X-Skills-Admin-Key", ""}, {"X-Skills-Admin-Key", "anything"}} {
				r := api.Do("POST", path, u.Token, map[string]any{"content": document(key("x"), "1", true, "")}, header...)
				Expect(r.Status).To(Equal(http.StatusForbidden), path)
				Expect(r.Body).To(BeEmpty())
			}
		}
	})

	It("refuses a missing or wrong key with an empty 403, even for an organization owner, and an anonymous caller with 401", func() {
		api := startApp(withAdminKey)
		c := newCrew()
		for _, header := range [][]string{nil, {"X-Skills-Admin-Key", "wrong"}, {"X-Skills-Admin-Key", adminKey + "x"}} {
			r := api.Do("POST", "/api/skills/index", c.Owner.Token, map[string]any{"content": document(key("x"), "1", true, "")}, header...)
			Expect(r.Status).To(Equal(http.StatusForbidden))
			Expect(r.Body).To(BeEmpty())
		}
		Expect(api.Do("POST", "/api/skills/index", "", map[string]any{"content": "x"}, "X-Skills-Admin-Key", adminKey).Status).To(Equal(http.StatusUnauthorized))
	})

	It("stores a shared Builtin skill with its source, and keeps Public only while Published across re-indexing", func() {
		api := startApp(withAdminKey)
		u := newUser()
		k := key("public")
		index := func(doc string) skillRow {
			r := api.Do("POST", "/api/skills/index", u.Token, map[string]any{
				"content": doc, "sourceRepo": "https://example.com/skills.git", "sourcePath": k + "/SKILL.md", "sourceCommit": "abc123",
			}, "X-Skills-Admin-Key", adminKey)
			Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
			var s skillRow
			r.JSON(&s)
			return s
		}
		s := index(document(k, "1.0", true, "visibility: public\n"))
		Expect(s.Origin).To(Equal("Builtin"))
		Expect(s.OrganizationID).To(BeNil())
		Expect(s.Status).To(Equal("Published"))
		Expect(s.Visibility).To(Equal("Public"))
		Expect([]string{s.SourceRepo, s.SourcePath, s.SourceCommit}).To(Equal([]string{"https://example.com/skills.git", k + "/SKILL.md", "abc123"}))

		again := index(document(k, "1.0", false, "visibility: Public\n"))
		Expect(again.ID).To(Equal(s.ID), "re-indexing replaces the same identity")
		Expect(again.Status).To(Equal("Draft"))
		Expect(again.Visibility).To(Equal("PrivateToOrg"))
		versions := skills(client.Do("GET", "/api/skills/"+k, u.Token, nil))
		Expect(versions).To(HaveLen(1))
		Expect(versions[0].Visibility).To(Equal("PrivateToOrg"))
	})

	It("indexes real Agent Skills files: an over-long description with a warning, metadata and allowed-tools", func() {
		api := startApp(withAdminKey)
		u := newUser()
		name := key("pdf")
		long := strings.Repeat("Extract text and tables from PDF files, fill forms, merge documents. ", 20)
		r := api.Do("POST", "/api/skills/index", u.Token, map[string]any{
			"content":    "---\nname: " + name + "\ndescription: " + long + "\nlicense: Proprietary. LICENSE.txt has complete terms\n---\n# PDF processing\n\nUse pypdf.\n",
			"sourcePath": "skills/" + name + "/SKILL.md", "sourceCommit": "0123abcd",
		}, "X-Skills-Admin-Key", adminKey)
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var s skillRow
		r.JSON(&s)
		Expect(s.Summary).To(Equal(strings.TrimSpace(long)))
		Expect(s.Version).To(Equal("0123abcd"))
		Expect(s.License).To(Equal("Proprietary. LICENSE.txt has complete terms"))
		Expect(s.Status).To(Equal("Draft"))
		Expect(s.Warnings).To(ContainElement(ContainSubstring("more than the 1024 the Agent Skills format allows")))

		name = key("forms")
		r = api.Do("POST", "/api/skills/index", u.Token, map[string]any{
			"content": "---\nname: " + name + "\ndescription: Fills forms.\ncompatibility: Requires python3\nmetadata:\n  author: example-org\n  version: 1.0\n" +
				"  roles: qa, backend\n  golden-test-1-input: a W-9\n  golden-test-1-expected: a filled W-9\nallowed-tools: Bash(git:*) Read\n---\nFill it.\n",
			"sourcePath": "skills/" + name + "/SKILL.md",
		}, "X-Skills-Admin-Key", adminKey)
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		r.JSON(&s)
		Expect(s.Version).To(Equal("1.0"))
		Expect(s.Metadata).To(HaveKeyWithValue("author", "example-org"))
		Expect(s.Tools).To(Equal([]string{"Bash(git:*)", "Read"}))
		Expect(s.Compatibility).To(Equal("Requires python3"))
		Expect(s.Roles).To(Equal([]string{"qa", "backend"}))
		Expect(s.Status).To(Equal("Published"), "roles and golden tests under metadata publish an Agent Skills file")
	})

	It("resolves the commit indexed last among versions that are commits, whatever the hashes' bytes say", func() {
		api := startApp(withAdminKey)
		u := newUser()
		name := key("commits")
		for _, commit := range []string{"ffff0000", "0000ffff"} {
			r := api.Do("POST", "/api/skills/index", u.Token, map[string]any{
				"content":    "---\nname: " + name + "\ndescription: Reads history.\n---\nBody at " + commit + ".\n",
				"sourcePath": "skills/" + name + "/SKILL.md", "sourceCommit": commit,
			}, "X-Skills-Admin-Key", adminKey)
			Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		}
		versions := skills(client.Do("GET", "/api/skills/"+name, u.Token, nil))
		Expect(versions).To(HaveLen(2))
		Expect(versions[0].Version).To(Equal("0000ffff"))
	})

	It("refuses an Agent Skills file without a description with a 400 naming the field", func() {
		api := startApp(withAdminKey)
		u := newUser()
		name := key("bare")
		r := api.Do("POST", "/api/skills/index", u.Token, map[string]any{
			"content": "---\nname: " + name + "\n---\nBody.\n", "sourcePath": "skills/" + name + "/SKILL.md", "sourceCommit": "c1",
		}, "X-Skills-Admin-Key", adminKey)
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(ContainSubstring("needs a description"))
	})

	It("answers content is required. and the malformed document's line", func() {
		api := startApp(withAdminKey)
		u := newUser()
		r := api.Do("POST", "/api/skills/index", u.Token, map[string]any{"content": " "}, "X-Skills-Admin-Key", adminKey)
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("content is required."))
		r = api.Do("POST", "/api/skills/index", u.Token, map[string]any{"content": "---\nskillKey: a\nroles:\n  x: y\n---\nb"}, "X-Skills-Admin-Key", adminKey)
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("Malformed document: line 4: roles must be a list of values."))
	})
})

var _ = Describe("syncing the shared Git source", func() {
	It("indexes every SKILL.md with repo, path and commit, reports a bad file, and withdraws a removed one", func() {
		src := newGitSource()
		api := startApp(func(c *config.Config) { withAdminKey(c); c.SkillSource.GitURL = src.Bare })
		u := newUser()
		a, b := key("alpha"), key("beta")
		commit := src.commit(map[string]*string{
			"skills/" + a + "/SKILL.md": ptr(document(a, "1.0", true, "")),
			"skills/" + b + "/SKILL.md": ptr("---\nname: " + b + "\ndescription: Beta.\n---\nBeta body.\n"),
			"skills/broken/SKILL.md":    ptr("---\nskillKey: broken\nname: [x\n---\nbody\n"),
			"README.md":                 ptr("not a skill"),
		})
		r := api.Do("POST", "/api/skills/sync", u.Token, nil, "X-Skills-Admin-Key", adminKey)
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var res struct {
			Repo, Commit       string
			Indexed, Withdrawn int
			Problems           []struct{ Path, Message string }
		}
		r.JSON(&res)
		Expect(res.Repo).To(Equal(src.Bare))
		Expect(res.Commit).To(Equal(commit))
		Expect(res.Indexed).To(Equal(2))
		Expect(res.Problems).To(HaveLen(1))
		Expect(res.Problems[0].Path).To(Equal("skills/broken/SKILL.md"))
		Expect(res.Problems[0].Message).To(HavePrefix("Malformed document: line 3:"))

		beta := skills(client.Do("GET", "/api/skills/"+b, u.Token, nil))
		Expect(beta).To(HaveLen(1))
		Expect(beta[0].Version).To(Equal(commit), "an Agent Skills file without metadata.version takes the commit")
		Expect([]string{beta[0].SourceRepo, beta[0].SourcePath, beta[0].SourceCommit}).To(Equal([]string{src.Bare, "skills/" + b + "/SKILL.md", commit}))

		By("removing a file withdraws its skill; the others stay")
		src.commit(map[string]*string{"skills/" + a + "/SKILL.md": nil})
		r = api.Do("POST", "/api/skills/sync", u.Token, nil, "X-Skills-Admin-Key", adminKey)
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		r.JSON(&res)
		Expect(res.Indexed).To(Equal(1))
		Expect(res.Withdrawn).To(Equal(2), "the removed file's skill and beta's version of the previous commit")
		Expect(client.Do("GET", "/api/skills/"+a, u.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(skills(client.Do("GET", "/api/skills/"+b, u.Token, nil))).To(HaveLen(1))
	})

	It("embeds and rewrites only the files whose content changed", func() {
		var embedded atomic.Int64
		stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct{ Input []string }
			Expect(json.NewDecoder(r.Body).Decode(&req)).To(Succeed())
			embedded.Add(int64(len(req.Input)))
			data := make([]map[string]any, len(req.Input))
			for i := range req.Input {
				v := make([]float64, 384)
				v[i%384] = 1
				data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
			}
			w.Header().Set("Content-Type", "application/json")
			Expect(json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": "stub", "data": data, "usage": map[string]any{}})).To(Succeed())
		}))
		DeferCleanup(stub.Close)
		src := newGitSource()
		a, b := key("steady"), key("moving")
		src.commit(map[string]*string{
			"skills/" + a + "/SKILL.md": ptr("---\nname: " + a + "\ndescription: Steady.\n---\nSteady body.\n"),
			"skills/" + b + "/SKILL.md": ptr(document(b, "1.0", true, "")),
		})
		api := startApp(func(c *config.Config) { withAdminKey(c); withEmbeddings(stub.URL)(c); c.SkillSource.GitURL = src.Bare })
		u := newUser()
		sync := func() {
			GinkgoHelper()
			r := api.Do("POST", "/api/skills/sync", u.Token, nil, "X-Skills-Admin-Key", adminKey)
			Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		}
		Eventually(func() int { return client.Do("GET", "/api/skills/"+b, u.Token, nil).Status }).Should(Equal(http.StatusOK), "synced at start-up")
		first := embedded.Load()
		steady := skills(client.Do("GET", "/api/skills/"+a, u.Token, nil))
		moving := skills(client.Do("GET", "/api/skills/"+b, u.Token, nil))
		Expect(moving).To(HaveLen(1))

		By("a sync of the same commit embeds and rewrites nothing")
		sync()
		Expect(embedded.Load()).To(Equal(first))
		Expect(skills(client.Do("GET", "/api/skills/"+b, u.Token, nil))).To(Equal(moving))

		By("a commit that changes one file embeds that file only")
		commit := src.commit(map[string]*string{"skills/" + b + "/SKILL.md": ptr(document(b, "1.0", true, "") + "More.\n")})
		sync()
		Expect(embedded.Load()).To(Equal(first + 1))
		Expect(skills(client.Do("GET", "/api/skills/"+b, u.Token, nil))[0].SourceCommit).To(Equal(commit))
		now := skills(client.Do("GET", "/api/skills/"+a, u.Token, nil))
		Expect(now).To(HaveLen(1))
		Expect(now[0].Version).To(Equal(commit), "the unchanged file still takes the newest commit as its version")
		Expect(now[0].Version).NotTo(Equal(steady[0].Version))
	})

	It("re-syncs on an anonymous push hook", func() {
		src := newGitSource()
		k := key("hook")
		src.commit(map[string]*string{k + "/SKILL.md": ptr(document(k, "1.0", true, ""))})
		api := startApp(func(c *config.Config) { c.SkillSource.GitURL = src.Bare })
		u := newUser()
		Eventually(func() int { return client.Do("GET", "/api/skills/"+k, u.Token, nil).Status }).Should(Equal(http.StatusOK), "synced at start-up")

		k2 := key("pushed")
		src.commit(map[string]*string{k2 + "/SKILL.md": ptr(document(k2, "1.0", true, ""))})
		r := api.Do("POST", "/api/skills/webhook/github", "", `{"ref":"refs/heads/master"}`)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(string(r.Body)).To(MatchJSON(`{"status":"scheduled"}`))
		Eventually(func() int { return client.Do("GET", "/api/skills/"+k2, u.Token, nil).Status }).Should(Equal(http.StatusOK))
	})

	It("answers 400 to a sync when no source is configured", func() {
		api := startApp(withAdminKey)
		r := api.Do("POST", "/api/skills/sync", newUser().Token, nil, "X-Skills-Admin-Key", adminKey)
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("No shared skill source is configured."))
	})

	It("syncs the starter library at start-up, so a new organization sees shared Published skills at once", func() {
		startApp(func(c *config.Config) { c.SkillSource.Dir = "../../starter-skills" })
		c := newCrew()
		for _, role := range []string{"product-owner", "qa", "backend"} {
			Eventually(func() []skillRow {
				return skills(client.Do("GET", "/api/skills?organizationId="+c.OrgID+"&role="+role, c.Member.Token, nil))
			}).Should(ContainElement(And(HaveField("Status", "Published"), HaveField("Origin", "Builtin"))), role)
		}
		Expect(skills(client.Do("GET", "/api/skills/design-rest-endpoint", c.Member.Token, nil))[0].Version).To(Equal("1.0.0"))
	})
})

var _ = Describe("verifying push hooks", func() {
	const secret = "hook-secret"
	DescribeTable("with a secret configured",
		func(host string, header []string, status int) {
			a := startApp(func(c *config.Config) { c.SkillSource.WebhookSecret = secret })
			r := a.Do("POST", "/api/skills/webhook/"+host, "", hookBody, header...)
			Expect(r.Status).To(Equal(status))
			if status == http.StatusUnauthorized {
				Expect(r.Body).To(BeEmpty())
			}
		},
		Entry("GitHub with the body's HMAC", "github", []string{"X-Hub-Signature-256", sign(secret, hookBody)}, http.StatusOK),
		Entry("GitHub with another secret's HMAC", "github", []string{"X-Hub-Signature-256", sign("other", hookBody)}, http.StatusUnauthorized),
		Entry("GitHub with a signature of another body", "github", []string{"X-Hub-Signature-256", sign(secret, "{}")}, http.StatusUnauthorized),
		Entry("GitHub without a signature", "github", nil, http.StatusUnauthorized),
		Entry("Gitea with the body's HMAC", "gitea", []string{"X-Hub-Signature-256", sign(secret, hookBody)}, http.StatusOK),
		Entry("GitLab with the token", "gitlab", []string{"X-Gitlab-Token", secret}, http.StatusOK),
		Entry("GitLab without a token", "gitlab", nil, http.StatusUnauthorized),
		Entry("GitLab with a wrong token", "gitlab", []string{"X-Gitlab-Token", "nope"}, http.StatusUnauthorized),
		Entry("an unknown host", "example", []string{"X-Gitlab-Token", secret}, http.StatusUnauthorized),
	)

	It("accepts an unsigned hook as before when no secret is configured", func() {
		a := startApp(func(c *config.Config) { c.SkillSource.WebhookSecret = "" })
		Expect(a.Do("POST", "/api/skills/webhook/github", "", hookBody).Status).To(Equal(http.StatusOK))
	})
})

const hookBody = `{"ref":"refs/heads/main","commits":[]}`

// sign is GitHub's X-Hub-Signature-256 of body under secret.
func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// first is the first of a status and a message.
func first(status int, _ string) int { return status }

var _ = Describe("a run's skill catalog", func() {
	It("lists the agent's resolved skills by name and summary, the closest to the task first", func() {
		startWorker()
		c := newCrew()
		model := newModelStub(answering("Done."))
		t := seedTeam(c, agentSpec{Primary: newConnection(c, model.URL+"/v1", "sk-skills-run")})
		review, billing := key("review-dialogs"), key("billing")
		reviewReq := authored(c.OrgID, review, "1.0", true)
		reviewReq["summary"] = "Review an export dialog: check every option, label and error of the dialog."
		author(c.Owner.Token, reviewReq)
		billingReq := authored(c.OrgID, billing, "1.0", true)
		billingReq["summary"] = "Reconcile invoices and payment ledgers each month."
		author(c.Owner.Token, billingReq)
		Expect(db.Exec(`UPDATE agents SET skill_keys = ?::text[] WHERE id = ?`, "{"+billing+","+review+","+key("missing")+"}", t.AgentID).Error).To(Succeed())

		id := t.enqueue()
		Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Completed"))
		prompt := readRun(id).Prompt
		Expect(prompt).To(ContainSubstring("Review an export dialog"))
		Expect(prompt).To(ContainSubstring("Reconcile invoices"))
		Expect(strings.Index(prompt, "Review an export dialog")).To(BeNumerically("<", strings.Index(prompt, "Reconcile invoices")),
			"the task reviews the export dialog, so that skill ranks first")
		Expect(prompt).NotTo(ContainSubstring("Steps."), "only names and summaries, never bodies")
	})
})
