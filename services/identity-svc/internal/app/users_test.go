package app_test

import (
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	events "github.com/motionstudio/platform/proto-events"
)

// problemCode decodes the code of a problem+json answer.
func problemCode(body []byte) string {
	GinkgoHelper()
	var p struct {
		Code string `json:"code"`
	}
	Expect(testJSON(body, &p)).To(Succeed())
	return p.Code
}

var _ = Describe("the calling user's own account", func() {
	var me member

	BeforeEach(func() {
		_, slug := newTenant("self")
		me = newMember(slug, "")
	})

	It("updates the profile and answers it back", func() {
		r := client.Do("PATCH", "/v1/users/me", me.Token, map[string]any{
			"full_name": "  Ada Lovelace ", "slogan": "Engines!", "about_me": "Analyst", "company_name": "Babbage & Co",
			"website_name": "ada.example", "birth_date": "1990-12-10", "gender": "Female",
			"email_tell_me": false, "telegram_tell_me": true,
		})
		Expect(r.Status).To(Equal(http.StatusOK))
		var u map[string]any
		r.JSON(&u)
		Expect(u).To(HaveKeyWithValue("full_name", "Ada Lovelace"))
		Expect(u).To(HaveKeyWithValue("birth_date", "1990-12-10"))
		Expect(u).To(HaveKeyWithValue("gender", "Female"))
		Expect(u).To(HaveKeyWithValue("email_tell_me", false))
		Expect(u).To(HaveKeyWithValue("sms_tell_me", true))
		Expect(u).To(HaveKeyWithValue("telegram_tell_me", true))

		r = client.Do("GET", "/v1/users/me", me.Token, nil)
		r.JSON(&u)
		Expect(u).To(HaveKeyWithValue("slogan", "Engines!"))
		Expect(u).To(HaveKeyWithValue("company_name", "Babbage & Co"))
	})

	It("refuses an invalid update with the fields named and changes nothing", func() {
		r := client.Do("PATCH", "/v1/users/me", me.Token, map[string]any{
			"full_name": "Changed", "gender": "Robot", "birth_date": "2999-01-01",
		})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(ContainSubstring(`"field":"gender"`))
		Expect(string(r.Body)).To(ContainSubstring(`"field":"birth_date"`))

		var u map[string]any
		client.Do("GET", "/v1/users/me", me.Token, nil).JSON(&u)
		Expect(u["full_name"]).NotTo(Equal("Changed"))

		Expect(client.Do("PATCH", "/v1/users/me", me.Token, `{"slogan": 5}`).Status).To(Equal(http.StatusBadRequest))
	})

	It("answers the balances in the platform currency", func() {
		r := client.Do("GET", "/v1/users/me/balance", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var b map[string]any
		r.JSON(&b)
		Expect(b).To(HaveKeyWithValue("balance_minor", BeNumerically("==", 0)))
		Expect(b).To(HaveKeyWithValue("currency", cfg.BalanceCurrency))
		Expect(b).To(HaveKeyWithValue("parallel_rendering_ceiling", BeNumerically("==", 1)))
	})

	It("sets a library avatar or a custom https avatar", func() {
		r := client.Do("POST", "/v1/users/me/avatar", me.Token, map[string]any{"avatar_id": "01930000-0000-7000-8000-000000000002"})
		Expect(r.Status).To(Equal(http.StatusOK))
		var u map[string]any
		r.JSON(&u)
		Expect(u).To(HaveKeyWithValue("avatar_url", "https://assets.motionstudio.app/avatars/library/02.png"))

		r = client.Do("POST", "/v1/users/me/avatar", me.Token, map[string]any{"avatar_url": "https://cdn.example.com/me.png"})
		Expect(r.Status).To(Equal(http.StatusOK))
		r.JSON(&u)
		Expect(u).To(HaveKeyWithValue("avatar_url", "https://cdn.example.com/me.png"))
	})

	It("refuses a bad avatar choice", func() {
		for _, body := range []map[string]any{
			{},
			{"avatar_id": "01930000-0000-7000-8000-000000000002", "avatar_url": "https://cdn.example.com/me.png"},
			{"avatar_url": "javascript:alert(1)"},
			{"avatar_url": "http://cdn.example.com/me.png"},
			{"avatar_url": "https://user:pw@cdn.example.com/me.png"},
		} {
			Expect(client.Do("POST", "/v1/users/me/avatar", me.Token, body).Status).To(Equal(http.StatusBadRequest), "%v", body)
		}
		Expect(client.Do("POST", "/v1/users/me/avatar", me.Token, map[string]any{"avatar_id": uuid.NewString()}).Status).
			To(Equal(http.StatusNotFound))
	})

	It("answers 401 without a token on every own-account operation", func() {
		Expect(client.Do("GET", "/v1/users/me/balance", "", nil).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("PATCH", "/v1/users/me", "", map[string]any{}).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("POST", "/v1/users/me/avatar", "", map[string]any{}).Status).To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("the user directory for administrators", func() {
	var (
		tenantA, tenantB string
		slugA, slugB     string
		platform         member
		adminA, userA    member
		userB            member
	)

	BeforeEach(func() {
		tenantA, slugA = newTenant("dira")
		tenantB, slugB = newTenant("dirb")
		adminA = newMember(slugA, "tenant-admin")
		userA = newMember(slugA, "")
		userB = newMember(slugB, "")
		platform = newMember(slugB, "platform-admin")
	})

	It("lets a platform admin read any user and a tenant admin only their own tenant's", func() {
		r := client.Do("GET", "/v1/users/"+userA.ID, platform.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(client.Do("GET", "/v1/users/"+userA.ID, adminA.Token, nil).Status).To(Equal(http.StatusOK))
		Expect(client.Do("GET", "/v1/users/"+userB.ID, adminA.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/users/"+adminA.ID, userA.Token, nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/users/"+uuid.NewString(), platform.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/users/not-a-uuid", platform.Token, nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/users/"+userA.ID, "", nil).Status).To(Equal(http.StatusUnauthorized))
	})

	It("pages and searches users, newest first", func() {
		extra := []member{newMember(slugA, ""), newMember(slugA, "")}
		q := url.Values{"tenant_id": {tenantA}, "page_size": {"2"}}
		r := client.Do("GET", "/v1/users?"+q.Encode(), platform.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var page struct {
			Data []map[string]any `json:"data"`
			Meta map[string]any   `json:"meta"`
		}
		r.JSON(&page)
		Expect(page.Data).To(HaveLen(2))
		Expect(page.Data[0]["id"]).To(Equal(extra[1].ID))
		Expect(page.Meta).To(Equal(map[string]any{"page": 1.0, "page_size": 2.0, "total": 4.0, "has_more": true}))

		q.Set("page", "2")
		client.Do("GET", "/v1/users?"+q.Encode(), platform.Token, nil).JSON(&page)
		Expect(page.Data).To(HaveLen(2))
		Expect(page.Meta).To(HaveKeyWithValue("has_more", false))

		q = url.Values{"q": {userA.Email[:8]}}
		client.Do("GET", "/v1/users?"+q.Encode(), platform.Token, nil).JSON(&page)
		Expect(page.Data).To(HaveLen(1))
		Expect(page.Data[0]["id"]).To(Equal(userA.ID))

		client.Do("GET", "/v1/users", adminA.Token, nil).JSON(&page)
		Expect(page.Meta).To(HaveKeyWithValue("total", 4.0))
		Expect(page.Meta).To(HaveKeyWithValue("page_size", 20.0))
		for _, u := range page.Data {
			Expect(u["tenant_id"]).To(Equal(tenantA))
		}
	})

	It("refuses non-admins, other tenants and bad pages", func() {
		Expect(client.Do("GET", "/v1/users", userA.Token, nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/users?tenant_id="+tenantB, adminA.Token, nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/users?page_size=101", platform.Token, nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/users?page=0", platform.Token, nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/users?page=x", platform.Token, nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/users", "", nil).Status).To(Equal(http.StatusUnauthorized))
	})

	It("bans a user until a date and records the event", func() {
		until := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
		r := client.Do("POST", "/v1/users/"+userA.ID+"/ban", adminA.Token, map[string]any{"reason": "spam", "unblock_date": until.Format(time.RFC3339)})
		Expect(r.Status).To(Equal(http.StatusNoContent))

		var u map[string]any
		client.Do("GET", "/v1/users/"+userA.ID, platform.Token, nil).JSON(&u)
		Expect(u).To(HaveKeyWithValue("is_banned", true))
		Expect(u).To(HaveKeyWithValue("banned_until", until.Format(time.RFC3339)))
		Expect(outboxEvents(events.SubjectUserBanned, userA.ID, `"spam"`, adminA.ID)).To(Equal(1))
		var until2 time.Time
		Expect(testDB().Raw("SELECT banned_until FROM users WHERE id = ?", userA.ID).Scan(&until2).Error).To(Succeed())
		Expect(until2.Equal(until)).To(BeTrue())
	})

	It("keeps a banned user from logging in", func() {
		login := func() int {
			return client.Do("POST", "/v1/auth/login", "", map[string]any{
				"tenant_slug": slugA, "email": userA.Email, "password": "correct-horse-battery",
			}, "X-Forwarded-For", authIP()).Status
		}
		Expect(login()).To(Equal(http.StatusOK))
		Expect(client.Do("POST", "/v1/users/"+userA.ID+"/ban", adminA.Token, map[string]any{"reason": "abuse"}).Status).
			To(Equal(http.StatusNoContent))
		Expect(login()).To(Equal(http.StatusUnauthorized))
	})

	It("refuses bans without a reason, in the past, of oneself, across tenants or by non-admins", func() {
		ban := func(who member, target string, body any) int {
			return client.Do("POST", "/v1/users/"+target+"/ban", who.Token, body).Status
		}
		Expect(ban(adminA, userA.ID, map[string]any{"reason": " "})).To(Equal(http.StatusBadRequest))
		Expect(ban(adminA, userA.ID, map[string]any{"reason": "x", "unblock_date": "2001-01-01T00:00:00Z"})).To(Equal(http.StatusBadRequest))
		self := client.Do("POST", "/v1/users/"+adminA.ID+"/ban", adminA.Token, map[string]any{"reason": "x"})
		Expect(self.Status).To(Equal(http.StatusBadRequest))
		Expect(problemCode(self.Body)).To(Equal("cannot_ban_self"))
		Expect(ban(adminA, userB.ID, map[string]any{"reason": "x"})).To(Equal(http.StatusNotFound))
		Expect(ban(adminA, uuid.NewString(), map[string]any{"reason": "x"})).To(Equal(http.StatusNotFound))
		Expect(ban(userA, adminA.ID, map[string]any{"reason": "x"})).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/users/"+userA.ID+"/ban", "", map[string]any{"reason": "x"}).Status).To(Equal(http.StatusUnauthorized))

		var u map[string]any
		client.Do("GET", "/v1/users/"+userA.ID, platform.Token, nil).JSON(&u)
		Expect(u).To(HaveKeyWithValue("is_banned", false))
		Expect(ban(platform, userB.ID, map[string]any{"reason": "fraud"})).To(Equal(http.StatusNoContent))
		client.Do("GET", "/v1/users/"+userB.ID, platform.Token, nil).JSON(&u)
		Expect(u).To(HaveKeyWithValue("is_banned", true))
		Expect(u["banned_until"]).To(BeNil())
	})
})
