package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("suspending a tenant", func() {
	It("stops its keys, logins, refreshes and tokens in every service within a second; reactivating restores the keys only", func() {
		slug := "suspend-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
		const password = "correct horse battery"
		t := admin("create-tenant", "-slug", slug, "-name", "Suspend "+slug, "-email", "ops@"+slug+".test")
		tenantID := t["id"].(string)
		admin("create-user", "-tenant", slug, "-email", "ann@"+slug+".test", "-password", password, "-name", "Ann", "-tenant-admin")
		opsSlug := "ops-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
		admin("create-tenant", "-slug", opsSlug, "-name", "Ops "+opsSlug, "-email", "ops@"+opsSlug+".test")
		admin("create-user", "-tenant", opsSlug, "-email", "root@"+opsSlug+".test", "-password", password, "-name", "Root", "-platform-admin")
		gateway := serviceToken()

		send := func(method, url, token string, body any) (int, map[string]any) {
			GinkgoHelper()
			raw, err := json.Marshal(body)
			Expect(err).NotTo(HaveOccurred())
			code, _, answer := call(method, url, token, strings.NewReader(string(raw)), "Content-Type", "application/json")
			var m map[string]any
			if len(answer) > 0 {
				Expect(json.Unmarshal(answer, &m)).To(Succeed(), string(answer))
			}
			return code, m
		}
		type tokens struct{ access, refresh string }
		login := func(tenantSlug, email string) (int, tokens) {
			GinkgoHelper()
			code, m := send(http.MethodPost, p.IdentityURL+"/v1/auth/login", "", map[string]string{"tenant_slug": tenantSlug, "email": email, "password": password})
			if code != http.StatusOK {
				return code, tokens{}
			}
			return code, tokens{access: m["access_token"].(string), refresh: m["refresh_token"].(string)}
		}
		refresh := func(tok tokens) int {
			GinkgoHelper()
			code, _ := send(http.MethodPost, p.IdentityURL+"/v1/auth/refresh", "", map[string]string{"refresh_token": tok.refresh})
			return code
		}
		code, ann := login(slug, "ann@"+slug+".test")
		Expect(code).To(Equal(http.StatusOK))
		code, root := login(opsSlug, "root@"+opsSlug+".test")
		Expect(code).To(Equal(http.StatusOK))

		code, key := send(http.MethodPost, p.IdentityURL+"/v1/tenants/"+tenantID+"/api-keys", ann.access, map[string]any{"name": "gateway", "scopes": []string{"renders:read"}})
		Expect(code).To(Equal(http.StatusCreated))
		secret := key["secret_key"].(string)
		sum := sha256.Sum256([]byte(secret))
		valid := func() any {
			code, v := send(http.MethodPost, p.IdentityURL+"/v1/api-keys/validate", gateway, map[string]string{"key_prefix": key["key_prefix"].(string), "key_hash": hex.EncodeToString(sum[:])})
			Expect(code).To(Equal(http.StatusOK))
			return v["valid"]
		}
		statusAt := func(url, token string) func() int {
			return func() int {
				code, _, _ := call(http.MethodGet, url, token, nil)
				return code
			}
		}
		everywhere := map[string]string{
			"identity": p.IdentityURL + "/v1/users/me", "content": p.ContentURL + "/v1/tags", "agentteam": p.AgentteamURL + "/api/orgboard/cartable",
		}
		Expect(valid()).To(BeTrue())
		for name, url := range everywhere {
			Expect(statusAt(url, ann.access)()).To(Equal(http.StatusOK), name)
		}

		By("a tenant admin may not send a status, and a platform admin only a known one")
		code, _ = send(http.MethodPatch, p.IdentityURL+"/v1/tenants/"+tenantID, ann.access, map[string]string{"status": "Suspended"})
		Expect(code).To(Equal(http.StatusForbidden))
		code, problem := send(http.MethodPatch, p.IdentityURL+"/v1/tenants/"+tenantID, root.access, map[string]string{"status": "Frozen"})
		Expect(code).To(Equal(http.StatusBadRequest))
		Expect(problem["errors"]).To(ContainElement(HaveKeyWithValue("field", "status")))

		By("suspending: within a second everything of the tenant is refused")
		code, _ = send(http.MethodPatch, p.IdentityURL+"/v1/tenants/"+tenantID, root.access, map[string]string{"status": "Suspended"})
		Expect(code).To(Equal(http.StatusOK))
		Eventually(valid).WithTimeout(time.Second).WithPolling(20 * time.Millisecond).Should(BeFalse())
		for name, url := range everywhere {
			Eventually(statusAt(url, ann.access)).WithTimeout(time.Second).WithPolling(20*time.Millisecond).
				Should(Equal(http.StatusUnauthorized), name)
		}
		code, _ = login(slug, "ann@"+slug+".test")
		Expect(code).To(Equal(http.StatusUnauthorized))
		Expect(refresh(ann)).To(Equal(http.StatusUnauthorized))
		Expect(statusAt(everywhere["content"], root.access)()).To(Equal(http.StatusOK), "other tenants keep working")

		By("reactivating: the keys work again, the old tokens do not, a new login does")
		code, _ = send(http.MethodPatch, p.IdentityURL+"/v1/tenants/"+tenantID, root.access, map[string]string{"status": "Active"})
		Expect(code).To(Equal(http.StatusOK))
		Eventually(valid).WithTimeout(time.Second).WithPolling(20 * time.Millisecond).Should(BeTrue())
		code, fresh := login(slug, "ann@"+slug+".test")
		Expect(code).To(Equal(http.StatusOK))
		for name, url := range everywhere {
			Expect(statusAt(url, ann.access)()).To(Equal(http.StatusUnauthorized), "old token at %s", name)
			Expect(statusAt(url, fresh.access)()).To(Equal(http.StatusOK), "new token at %s", name)
		}
	})
})
