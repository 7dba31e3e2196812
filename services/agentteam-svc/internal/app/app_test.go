package app_test

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("module pings", func() {
	DescribeTable("answer anonymously with the module name",
		func(module string) {
			r := client.Do("GET", "/api/"+module+"/ping", "", nil)
			Expect(r.Status).To(Equal(http.StatusOK))
			Expect(r.Body).To(MatchJSON(`{"module":"` + module + `","status":"ok"}`))
		},
		Entry("organization board", "orgboard"),
		Entry("skill library", "skills"),
		Entry("agent runs", "assembler"),
	)
})

var _ = Describe("the cartable", func() {
	var member, team string

	BeforeEach(func() {
		member = uuid.NewString()
		org := uuid.NewString()
		team = uuid.NewString()
		Expect(db.Exec(`INSERT INTO organizations (id, name) VALUES (?, 'Initech')`, org).Error).To(Succeed())
		Expect(db.Exec(`INSERT INTO teams (id, organization_id, name) VALUES (?, ?, 'Platform')`, team, org).Error).To(Succeed())
	})

	insert := func(title, assignee string, updated time.Time) {
		GinkgoHelper()
		Expect(db.Exec(`INSERT INTO work_items (id, team_id, title, assignee_kind, assignee_id, updated_at) VALUES (?, ?, ?, 'Member', ?, ?)`,
			uuid.NewString(), team, title, assignee, updated).Error).To(Succeed())
	}

	It("lists the caller's tasks, most recently updated first, and nobody else's", func() {
		now := time.Now()
		insert("older", member, now.Add(-time.Hour))
		insert("newer", member, now)
		insert("someone else's", uuid.NewString(), now)
		r := client.Do("GET", "/api/orgboard/cartable", tokens.UserToken(member, uuid.NewString(), false), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var items []map[string]any
		r.JSON(&items)
		Expect(items).To(HaveLen(2))
		Expect(items[0]).To(HaveKeyWithValue("title", "newer"))
		Expect(items[0]).To(HaveKeyWithValue("assigneeKind", "Member"))
		Expect(items[0]).To(HaveKeyWithValue("teamId", team))
		Expect(items[1]).To(HaveKeyWithValue("title", "older"))
	})

	It("answers 401 with an empty body without a token and 403 with an empty body to a service", func() {
		r := client.Do("GET", "/api/orgboard/cartable", "", nil)
		Expect(r.Status).To(Equal(http.StatusUnauthorized))
		Expect(r.Body).To(BeEmpty())
		r = client.Do("GET", "/api/orgboard/cartable", tokens.ServiceToken("render"), nil)
		Expect(r.Status).To(Equal(http.StatusForbidden))
		Expect(r.Body).To(BeEmpty())
	})
})
