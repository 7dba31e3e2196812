package app_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	events "github.com/motionstudio/platform/proto-events"
)

var _ = Describe("one user, one tenant on the wire", func() {
	It("answers the same user at login as GET /v1/users/me, profile included", func() {
		c := newAuthClient()
		acc := authRegister(c)
		status, grant := c.do("POST", "/v1/auth/login", "", map[string]any{
			"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": authPassword,
		})
		Expect(status).To(Equal(http.StatusOK), "%v", grant)
		status, me := c.do("GET", "/v1/users/me", grant["access_token"].(string), nil)
		Expect(status).To(Equal(http.StatusOK))
		Expect(grant["user"]).To(Equal(me))
		Expect(me).To(HaveKeyWithValue("email_tell_me", true))
		Expect(me).To(HaveKeyWithValue("is_banned", false))
	})

	It("answers the same tenant at login as GET /v1/tenants/{id}", func() {
		c := newAuthClient()
		acc := authRegister(c)
		_, grant := c.do("POST", "/v1/auth/login", "", map[string]any{
			"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": authPassword,
		})
		tenant := grant["tenant"].(map[string]any)
		status, got := c.do("GET", "/v1/tenants/"+tenant["id"].(string), grant["access_token"].(string), nil)
		Expect(status).To(Equal(http.StatusOK))
		Expect(tenant).To(Equal(got))
	})
})

var _ = Describe("every way a user comes to exist", func() {
	It("records identity.user.registered.v1 for a user made with `admin create-user`", func() {
		slug := authTenant()
		id := admin("create-user", "-tenant", slug, "-email", "cli@"+slug+".test", "-password", authPassword)["id"].(string)
		Expect(outboxEvents(events.SubjectUserRegistered, id, "cli@"+slug+".test")).To(Equal(1))
	})

	It("gives a user made with `admin create-user` the same defaults as one who registers", func() {
		slug := authTenant()
		admin("create-user", "-tenant", slug, "-email", "cli@"+slug+".test", "-password", authPassword)
		c := newAuthClient()
		acc := authAccount{TenantSlug: slug, Email: "cli@" + slug + ".test"}
		tok := authLogin(c, acc, "laptop")
		_, cli := c.do("GET", "/v1/users/me", tok.Access, nil)
		registered := authRegister(c)
		_, self := c.do("GET", "/v1/users/me", authLogin(c, registered, "laptop").Access, nil)
		for _, key := range []string{"email_tell_me", "sms_tell_me", "push_tell_me", "telegram_tell_me", "parallel_rendering_ceiling", "balance_minor"} {
			Expect(cli[key]).To(Equal(self[key]), key)
		}
	})
})
