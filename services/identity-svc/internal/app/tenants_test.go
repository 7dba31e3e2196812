package app_test

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	events "github.com/motionstudio/platform/proto-events"
)

func uniqueSlug(prefix string) string {
	return prefix + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
}

var _ = Describe("creating and listing tenants", func() {
	var platform, plain member

	BeforeEach(func() {
		_, slug := newTenant("home")
		platform = newMember(slug, "platform-admin")
		plain = newMember(slug, "tenant-admin")
	})

	It("lets a platform admin and the signup service create tenants", func() {
		slug := uniqueSlug("acme")
		r := client.Do("POST", "/v1/tenants", platform.Token, map[string]any{
			"slug": slug, "name": "Acme", "contact_email": "ops@acme.test", "kind": "Enterprise", "contact_name": "Wile",
		})
		Expect(r.Status).To(Equal(http.StatusCreated))
		var t map[string]any
		r.JSON(&t)
		Expect(t).To(HaveKeyWithValue("slug", slug))
		Expect(t).To(HaveKeyWithValue("kind", "Enterprise"))
		Expect(t).To(HaveKeyWithValue("status", "Active"))
		Expect(t).To(HaveKeyWithValue("domain_verified", false))
		Expect(t["custom_domain"]).To(BeNil())

		r = client.Do("POST", "/v1/tenants", serviceToken(), map[string]any{"slug": uniqueSlug("signup"), "name": "Signup", "contact_email": "a@b.test"})
		Expect(r.Status).To(Equal(http.StatusCreated))
		r.JSON(&t)
		Expect(t).To(HaveKeyWithValue("kind", "Reseller"))
	})

	It("refuses duplicates, bad input and other callers", func() {
		slug := uniqueSlug("dup")
		body := map[string]any{"slug": slug, "name": "Dup", "contact_email": "a@dup.test"}
		Expect(client.Do("POST", "/v1/tenants", platform.Token, body).Status).To(Equal(http.StatusCreated))
		Expect(client.Do("POST", "/v1/tenants", platform.Token, body).Status).To(Equal(http.StatusConflict))

		r := client.Do("POST", "/v1/tenants", platform.Token, map[string]any{"slug": "-Bad-", "name": "", "contact_email": "a@b.test", "kind": "Internal"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		for _, f := range []string{"slug", "name", "kind"} {
			Expect(string(r.Body)).To(ContainSubstring(`"field":"` + f + `"`))
		}
		Expect(client.Do("POST", "/v1/tenants", platform.Token, map[string]any{"slug": uniqueSlug("x"), "name": "X", "contact_email": "nope"}).Status).
			To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/tenants", plain.Token, map[string]any{"slug": uniqueSlug("x"), "name": "X", "contact_email": "a@b.test"}).Status).
			To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/tenants", "", body).Status).To(Equal(http.StatusUnauthorized))
	})

	It("pages tenants for platform admins only", func() {
		marker := uniqueSlug("pagetest")
		for i := range 3 {
			Expect(client.Do("POST", "/v1/tenants", platform.Token, map[string]any{
				"slug": marker + "-" + string(rune('a'+i)), "name": "Paged", "contact_email": "p@p.test"}).Status).To(Equal(http.StatusCreated))
		}
		r := client.Do("GET", "/v1/tenants?page_size=2&q="+marker, platform.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var page struct {
			Data []map[string]any `json:"data"`
			Meta map[string]any   `json:"meta"`
		}
		r.JSON(&page)
		Expect(page.Data).To(HaveLen(2))
		Expect(page.Data[0]["slug"]).To(Equal(marker + "-c"))
		Expect(page.Meta).To(Equal(map[string]any{"page": 1.0, "page_size": 2.0, "total": 3.0, "has_more": true}))

		Expect(client.Do("GET", "/v1/tenants", plain.Token, nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/tenants?page_size=500", platform.Token, nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/tenants", "", nil).Status).To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("a tenant's settings, branding and usage", func() {
	var (
		tenantA, slugA        string
		adminA, userA, adminB member
		platform              member
	)

	BeforeEach(func() {
		tenantA, slugA = newTenant("seta")
		_, slugB := newTenant("setb")
		adminA = newMember(slugA, "tenant-admin")
		userA = newMember(slugA, "")
		adminB = newMember(slugB, "tenant-admin")
		platform = newMember(slugB, "platform-admin")
	})

	It("lets members, platform admins and services read the tenant, and nobody else", func() {
		for _, tok := range []string{userA.Token, adminA.Token, platform.Token, serviceToken()} {
			r := client.Do("GET", "/v1/tenants/"+tenantA, tok, nil)
			Expect(r.Status).To(Equal(http.StatusOK))
		}
		Expect(client.Do("GET", "/v1/tenants/"+tenantA, adminB.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/"+uuid.NewString(), platform.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA, "", nil).Status).To(Equal(http.StatusUnauthorized))
	})

	It("resolves by slug for the gateway but not for other tenants' users", func() {
		r := client.Do("GET", "/v1/tenants/by-slug/"+slugA, serviceToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var t map[string]any
		r.JSON(&t)
		Expect(t).To(HaveKeyWithValue("id", tenantA))
		Expect(client.Do("GET", "/v1/tenants/by-slug/"+slugA, userA.Token, nil).Status).To(Equal(http.StatusOK))
		Expect(client.Do("GET", "/v1/tenants/by-slug/"+slugA, adminB.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/by-slug/no-such-tenant", serviceToken(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/by-slug/unverified.example.com", serviceToken(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/by-slug/"+slugA, "", nil).Status).To(Equal(http.StatusUnauthorized))
	})

	It("updates settings for its tenant admin and records tenant.updated with the changed fields", func() {
		r := client.Do("PATCH", "/v1/tenants/"+tenantA, adminA.Token, map[string]any{
			"name": "Renamed", "billing_email": "billing@a.test", "allowed_origins": []string{"https://App.a.test", "https://app.a.test/"},
		})
		Expect(r.Status).To(Equal(http.StatusOK))
		var t map[string]any
		r.JSON(&t)
		Expect(t).To(HaveKeyWithValue("name", "Renamed"))
		Expect(t).To(HaveKeyWithValue("billing_email", "billing@a.test"))
		Expect(t).To(HaveKeyWithValue("allowed_origins", []any{"https://app.a.test"}))
		Expect(outboxEvents(events.SubjectTenantUpdated, tenantA, "billing_email", "allowed_origins", "Renamed")).To(Equal(1))

		Expect(client.Do("PATCH", "/v1/tenants/"+tenantA, platform.Token, map[string]any{"contact_name": "Ops"}).Status).To(Equal(http.StatusOK))
	})

	It("refuses bad settings and callers who may not manage the tenant", func() {
		for _, body := range []map[string]any{
			{"name": ""}, {"contact_email": "not-an-email"}, {"allowed_origins": []string{"ftp://x.test"}},
			{"allowed_origins": []string{"https://x.test/path"}},
		} {
			Expect(client.Do("PATCH", "/v1/tenants/"+tenantA, adminA.Token, body).Status).To(Equal(http.StatusBadRequest), "%v", body)
		}
		Expect(client.Do("PATCH", "/v1/tenants/"+tenantA, userA.Token, map[string]any{"name": "X"}).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("PATCH", "/v1/tenants/"+tenantA, adminB.Token, map[string]any{"name": "X"}).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("PATCH", "/v1/tenants/"+tenantA, "", map[string]any{"name": "X"}).Status).To(Equal(http.StatusUnauthorized))
		var t map[string]any
		client.Do("GET", "/v1/tenants/"+tenantA, platform.Token, nil).JSON(&t)
		Expect(t["name"]).NotTo(Equal("X"))
	})

	It("answers default branding, then stores validated branding", func() {
		r := client.Do("GET", "/v1/tenants/"+tenantA+"/branding", userA.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var b map[string]any
		r.JSON(&b)
		Expect(b).To(HaveKeyWithValue("display_name", "Tenant "+slugA))

		r = client.Do("PUT", "/v1/tenants/"+tenantA+"/branding", adminA.Token, map[string]any{
			"display_name": "Acme Studio", "primary_color": "#1a2b3c", "logo_url": "https://cdn.acme.test/logo.svg",
			"email_from_address": "hello@acme.test", "embed_enabled": true, "embed_allowed_hosts": []string{"*.acme.test"},
		})
		Expect(r.Status).To(Equal(http.StatusOK))
		r.JSON(&b)
		Expect(b).To(HaveKeyWithValue("primary_color", "#1a2b3c"), "a color is stored as given")
		client.Do("GET", "/v1/tenants/"+tenantA+"/branding", serviceToken(), nil).JSON(&b)
		Expect(b).To(HaveKeyWithValue("display_name", "Acme Studio"))
		Expect(b).To(HaveKeyWithValue("embed_allowed_hosts", []any{"*.acme.test"}))
		Expect(outboxEvents(events.SubjectTenantUpdated, tenantA, "branding")).To(Equal(1))
	})

	It("refuses invalid branding and callers who may not manage it", func() {
		r := client.Do("PUT", "/v1/tenants/"+tenantA+"/branding", adminA.Token, map[string]any{
			"primary_color": "red", "logo_url": "http://insecure.test/logo.png", "email_reply_to": "nope",
			"embed_allowed_hosts": []string{"not a host"},
		})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		for _, f := range []string{"primary_color", "logo_url", "email_reply_to", "embed_allowed_hosts"} {
			Expect(string(r.Body)).To(ContainSubstring(`"field":"` + f + `"`))
		}
		Expect(client.Do("PUT", "/v1/tenants/"+tenantA+"/branding", userA.Token, map[string]any{}).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("PUT", "/v1/tenants/"+tenantA+"/branding", adminB.Token, map[string]any{}).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/branding", adminB.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/branding", "", nil).Status).To(Equal(http.StatusUnauthorized))
	})

	It("answers recorded usage days in a range", func() {
		db := testDB()
		for _, d := range []string{"2026-03-01", "2026-03-02", "2026-03-05"} {
			Expect(db.Exec(`INSERT INTO tenant_usage_days (tenant_id, usage_date, renders_completed, api_calls, billing_currency)
				VALUES (?, ?, 3, 120, 'USD')`, tenantA, d).Error).To(Succeed())
		}
		r := client.Do("GET", "/v1/tenants/"+tenantA+"/usage?from=2026-03-02&to=2026-03-31", adminA.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var u struct {
			Data []map[string]any `json:"data"`
		}
		r.JSON(&u)
		Expect(u.Data).To(HaveLen(2))
		Expect(u.Data[0]).To(HaveKeyWithValue("usage_date", "2026-03-02"))
		Expect(u.Data[0]).To(HaveKeyWithValue("api_calls", 120.0))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/usage", serviceToken(), nil).Status).To(Equal(http.StatusOK))

		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/usage?from=2026-03-05&to=2026-03-01", adminA.Token, nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/usage?from=2024-01-01&to=2026-01-01", adminA.Token, nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/usage?from=yesterday", adminA.Token, nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/usage", userA.Token, nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/usage", adminB.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/usage", "", nil).Status).To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("verifying a tenant's custom domain", func() {
	var (
		tenantA, tenantB string
		adminA, adminB   member
		userA            member
	)

	BeforeEach(func() {
		var slugA, slugB string
		tenantA, slugA = newTenant("doma")
		tenantB, slugB = newTenant("domb")
		adminA = newMember(slugA, "tenant-admin")
		userA = newMember(slugA, "")
		adminB = newMember(slugB, "tenant-admin")
	})

	challenge := func(who member, tenantID string, body map[string]any) (int, map[string]any) {
		r := client.Do("POST", "/v1/tenants/"+tenantID+"/domains/verify", who.Token, body)
		var c map[string]any
		if r.Status == http.StatusOK {
			r.JSON(&c)
		}
		return r.Status, c
	}

	It("answers a DNS challenge and verifies the domain once the TXT record is published", func() {
		domain := uniqueSlug("studio") + ".example.com"
		status, c := challenge(adminA, tenantA, map[string]any{"domain": strings.ToUpper(domain)})
		Expect(status).To(Equal(http.StatusOK))
		Expect(c).To(HaveKeyWithValue("status", "Pending"))
		Expect(c).To(HaveKeyWithValue("method", "DNS_TXT"))
		Expect(c).To(HaveKeyWithValue("record_name", "_motionstudio-challenge."+domain))
		token := c["record_value"].(string)
		Expect(token).To(MatchRegexp(`^[0-9a-f]{32}$`))
		Expect(c["challenge_record"]).To(ContainSubstring(token))
		expires, err := time.Parse(time.RFC3339, c["expires_at"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(expires).To(BeTemporally("~", time.Now().Add(cfg.Account.DomainChallengeTTL), time.Minute))

		status, again := challenge(adminA, tenantA, map[string]any{"domain": domain})
		Expect(status).To(Equal(http.StatusOK))
		Expect(again).To(HaveKeyWithValue("verification_id", c["verification_id"]))
		Expect(again).To(HaveKeyWithValue("status", "Pending"))

		dnsServer.SetTXT("_motionstudio-challenge."+domain, "unrelated", token)
		status, again = challenge(adminA, tenantA, map[string]any{"domain": domain, "method": "DNS_TXT"})
		Expect(status).To(Equal(http.StatusOK))
		Expect(again).To(HaveKeyWithValue("status", "Verified"))

		var t map[string]any
		client.Do("GET", "/v1/tenants/by-slug/"+domain, serviceToken(), nil).JSON(&t)
		Expect(t).To(HaveKeyWithValue("id", tenantA))
		Expect(t).To(HaveKeyWithValue("custom_domain", domain))
		Expect(t).To(HaveKeyWithValue("domain_verified", true))
		Expect(outboxEvents(events.SubjectTenantDomainVerified, tenantA, domain)).To(Equal(1))

		status, _ = challenge(adminB, tenantB, map[string]any{"domain": domain})
		Expect(status).To(Equal(http.StatusConflict))
	})

	It("verifies an HTTP file challenge in the background check", func() {
		domain := uniqueSlug("files") + ".example.org"
		status, c := challenge(adminA, tenantA, map[string]any{"domain": domain, "method": "HTTP_FILE"})
		Expect(status).To(Equal(http.StatusOK))
		Expect(c).To(HaveKeyWithValue("record_name", "http://"+domain+"/.well-known/motionstudio-challenge.txt"))
		fileHost.set(domain, c["record_value"].(string))

		Eventually(func() any {
			var t map[string]any
			client.Do("GET", "/v1/tenants/"+tenantA, adminA.Token, nil).JSON(&t)
			return t["custom_domain"]
		}).WithTimeout(10 * time.Second).Should(Equal(domain))
	})

	It("refuses bad domains, members who are not admins and other tenants", func() {
		for _, body := range []map[string]any{
			{"domain": "localhost"}, {"domain": "127.0.0.1"}, {"domain": "bad_domain.com"},
			{"domain": "ok.example.com", "method": "EMAIL"},
		} {
			status, _ := challenge(adminA, tenantA, body)
			Expect(status).To(Equal(http.StatusBadRequest), "%v", body)
		}
		status, _ := challenge(userA, tenantA, map[string]any{"domain": "ok.example.com"})
		Expect(status).To(Equal(http.StatusForbidden))
		status, _ = challenge(adminB, tenantA, map[string]any{"domain": "ok.example.com"})
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/tenants/"+tenantA+"/domains/verify", "", map[string]any{"domain": "ok.example.com"}).Status).
			To(Equal(http.StatusUnauthorized))
	})
})
