package app_test

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/apikey"
)

var _ = Describe("a tenant's status", func() {
	var (
		tenantID, slug string
		tenantAdmin    member
		platform       member
		gateway        string
	)

	BeforeEach(func() {
		tenantID, slug = newTenant("status")
		tenantAdmin = newMember(slug, "tenant-admin")
		_, otherSlug := newTenant("statusops")
		platform = newMember(otherSlug, "platform-admin")
		gateway = serviceToken()
	})

	setStatus := func(who member, status string) (int, map[string]any) {
		GinkgoHelper()
		r := client.Do("PATCH", "/v1/tenants/"+tenantID, who.Token, map[string]any{"status": status})
		var m map[string]any
		r.JSON(&m)
		return r.Status, m
	}
	newKey := func() string {
		GinkgoHelper()
		r := client.Do("POST", "/v1/tenants/"+tenantID+"/api-keys", tenantAdmin.Token, map[string]any{"name": "gateway", "scopes": []string{"renders:read"}})
		Expect(r.Status).To(Equal(http.StatusCreated))
		var k map[string]any
		r.JSON(&k)
		return k["secret_key"].(string)
	}
	validate := func(secret string) map[string]any {
		GinkgoHelper()
		r := client.Do("POST", "/v1/api-keys/validate", gateway, map[string]any{
			"key_prefix": apikey.PrefixOf(cfg.Account.APIKeys.Brand, secret), "key_hash": sha256Hex(secret),
		})
		Expect(r.Status).To(Equal(http.StatusOK))
		var v map[string]any
		r.JSON(&v)
		return v
	}
	statusTo := func(status string) int {
		GinkgoHelper()
		code, _ := setStatus(platform, status)
		return code
	}
	auditTrail := func() []string {
		GinkgoHelper()
		var rows []string
		Expect(testDB().Raw(`SELECT from_status || '>' || to_status || ' by ' || changed_by FROM tenant_status_changes
			WHERE tenant_id = ? ORDER BY changed_at`, tenantID).Scan(&rows).Error).To(Succeed())
		return rows
	}

	It("stops a suspended tenant at once, and a reactivation restores its keys but not its sessions", func() {
		c := newAuthClient()
		status, body := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": slug, "email": "ann@" + slug + ".test", "password": authPassword})
		Expect(status).To(Equal(http.StatusCreated), "%v", body)
		acc := authAccount{ID: body["user_id"].(string), TenantSlug: slug, Email: "ann@" + slug + ".test"}
		old := authLogin(c, acc, "Laptop")
		secret := newKey()
		Expect(validate(secret)).To(HaveKeyWithValue("valid", true))
		status, _ = c.do("GET", "/v1/users/me", old.Access, nil)
		Expect(status).To(Equal(http.StatusOK))

		status, t := setStatus(platform, "Suspended")
		Expect(status).To(Equal(http.StatusOK), "%v", t)
		Expect(t).To(HaveKeyWithValue("status", "Suspended"))

		Expect(validate(secret)).To(And(HaveKeyWithValue("valid", false), HaveKeyWithValue("reason", "tenant_inactive")))
		status, body = c.do("GET", "/v1/users/me", old.Access, nil)
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(body).To(HaveKeyWithValue("code", "session_revoked"))
		status, _ = c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": slug, "email": acc.Email, "password": authPassword})
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(outboxEvents(events.SubjectTenantStatusChanged, tenantID, `"to_status": "Suspended"`, `"deny_until": "`)).To(Equal(1))

		status, t = setStatus(platform, "Active")
		Expect(status).To(Equal(http.StatusOK), "%v", t)
		Expect(validate(secret)).To(HaveKeyWithValue("valid", true), "reactivation restores the keys")
		status, _ = c.do("GET", "/v1/users/me", old.Access, nil)
		Expect(status).To(Equal(http.StatusUnauthorized), "but not the sessions")
		status, _ = c.do("POST", "/v1/auth/refresh", "", map[string]any{"refresh_token": old.Refresh})
		Expect(status).To(Equal(http.StatusUnauthorized))
		fresh := authLogin(c, acc, "Laptop")
		status, _ = c.do("GET", "/v1/users/me", fresh.Access, nil)
		Expect(status).To(Equal(http.StatusOK))
		status, _ = c.do("POST", "/v1/auth/refresh", "", map[string]any{"refresh_token": fresh.Refresh})
		Expect(status).To(Equal(http.StatusOK))

		Expect(outboxEvents(events.SubjectTenantStatusChanged, tenantID, `"to_status": "Active"`, `"tokens_not_before": null`)).To(Equal(1))
		Expect(auditTrail()).To(Equal([]string{"Active>Suspended by " + platform.ID, "Suspended>Active by " + platform.ID}))
	})

	It("refuses the refresh of a session while its tenant is suspended", func() {
		c := newAuthClient()
		status, body := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": slug, "email": "bo@" + slug + ".test", "password": authPassword})
		Expect(status).To(Equal(http.StatusCreated), "%v", body)
		tok := authLogin(c, authAccount{TenantSlug: slug, Email: "bo@" + slug + ".test"}, "Phone")
		Expect(statusTo("Cancelled")).To(Equal(http.StatusOK))
		status, _ = c.do("POST", "/v1/auth/refresh", "", map[string]any{"refresh_token": tok.Refresh})
		Expect(status).To(Equal(http.StatusUnauthorized))
	})

	It("lets only platform admins send a status, and only a known status and an allowed transition", func() {
		r := client.Do("PATCH", "/v1/tenants/"+tenantID, tenantAdmin.Token, map[string]any{"status": "Suspended", "name": "Sneaky"})
		Expect(r.Status).To(Equal(http.StatusForbidden))
		var problem map[string]any
		r.JSON(&problem)
		Expect(problem["detail"]).To(ContainSubstring("only a platform administrator may change a tenant's status"))

		status, problem := setStatus(platform, "Paused")
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(problem["errors"]).To(ContainElement(HaveKeyWithValue("field", "status")))

		Expect(statusTo("Active")).To(Equal(http.StatusOK), "the status it has changes nothing")
		Expect(auditTrail()).To(BeEmpty())

		Expect(statusTo("Trial")).To(Equal(http.StatusOK))
		Expect(statusTo("Cancelled")).To(Equal(http.StatusOK))
		status, problem = setStatus(platform, "Active")
		Expect(status).To(Equal(http.StatusConflict), "Cancelled is final")
		Expect(problem["detail"]).To(ContainSubstring("a Cancelled tenant cannot become Active"))

		var t map[string]any
		client.Do("GET", "/v1/tenants/"+tenantID, platform.Token, nil).JSON(&t)
		Expect(t).To(HaveKeyWithValue("status", "Cancelled"))
		Expect(t["name"]).NotTo(Equal("Sneaky"))
		Expect(auditTrail()).To(Equal([]string{"Active>Trial by " + platform.ID, "Trial>Cancelled by " + platform.ID}))
	})

	It("is set by the operator CLI too, and every replica's key cache learns it within a second", func() {
		secret := newKey()
		Expect(validate(secret)).To(HaveKeyWithValue("valid", true))

		out := admin("tenant-status", slug, "Suspended")
		Expect(out).To(HaveKeyWithValue("status", "Suspended"))
		Eventually(func() any { return validate(secret)["reason"] }).WithTimeout(2 * time.Second).WithPolling(20 * time.Millisecond).
			Should(Equal("tenant_inactive"))
		Expect(client.Do("GET", "/v1/users/me", tenantAdmin.Token, nil).Status).To(Equal(http.StatusUnauthorized))

		admin("tenant-status", tenantID, "Active")
		Eventually(func() any { return validate(secret)["valid"] }).WithTimeout(2 * time.Second).WithPolling(20 * time.Millisecond).
			Should(BeTrue())
		Expect(auditTrail()).To(Equal([]string{"Active>Suspended by admin-cli", "Suspended>Active by admin-cli"}))
	})
})
