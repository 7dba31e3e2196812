package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
	"github.com/motionstudio/platform/services/identity-svc/internal/apikey"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

var _ = Describe("tenant API keys", func() {
	var (
		tenantA, tenantB string
		adminA, userA    member
		adminB           member
		gateway          string
	)

	BeforeEach(func() {
		var slugA, slugB string
		tenantA, slugA = newTenant("keya")
		tenantB, slugB = newTenant("keyb")
		adminA = newMember(slugA, "tenant-admin")
		userA = newMember(slugA, "")
		adminB = newMember(slugB, "tenant-admin")
		gateway = serviceToken()
	})

	create := func(who member, tenantID string, body map[string]any) (int, map[string]any) {
		GinkgoHelper()
		r := client.Do("POST", "/v1/tenants/"+tenantID+"/api-keys", who.Token, body)
		var k map[string]any
		if r.Status == http.StatusCreated {
			r.JSON(&k)
		}
		return r.Status, k
	}
	validate := func(body map[string]any) (int, map[string]any) {
		GinkgoHelper()
		r := client.Do("POST", "/v1/api-keys/validate", gateway, body)
		var v map[string]any
		if r.Status == http.StatusOK {
			r.JSON(&v)
		}
		return r.Status, v
	}
	validateSecret := func(secret, ip string) map[string]any {
		GinkgoHelper()
		body := map[string]any{"key_prefix": apikey.PrefixOf(cfg.Account.APIKeys.Brand, secret), "key_hash": sha256Hex(secret)}
		if ip != "" {
			body["ip_address"] = ip
		}
		status, v := validate(body)
		Expect(status).To(Equal(http.StatusOK))
		return v
	}

	It("answers the secret once, stores only its hash, and never shows or logs it again", func() {
		status, k := create(adminA, tenantA, map[string]any{"name": "CI", "scopes": []string{"renders:create", "renders:read", "renders:read"}})
		Expect(status).To(Equal(http.StatusCreated))
		secret := k["secret_key"].(string)
		Expect(secret).To(MatchRegexp(`^ms_live_[0-9A-Za-z]{38}$`))
		Expect(apikey.WellFormed("ms", secret)).To(BeTrue())
		Expect(k).To(HaveKeyWithValue("key_prefix", secret[:16]))
		Expect(k).To(HaveKeyWithValue("last4", secret[len(secret)-4:]))
		Expect(k).To(HaveKeyWithValue("scopes", []any{"renders:create", "renders:read"}))
		Expect(k).To(HaveKeyWithValue("rate_limit_rpm", 600.0))
		Expect(k).To(HaveKeyWithValue("environment", "Live"))

		var stored []string
		Expect(testDB().Raw("SELECT key_hash FROM api_keys WHERE id = ?", k["id"]).Scan(&stored).Error).To(Succeed())
		Expect(stored).To(Equal([]string{sha256Hex(secret)}))

		v := validateSecret(secret, "")
		Expect(v).To(HaveKeyWithValue("valid", true))
		Expect(v).To(HaveKeyWithValue("tenant_id", tenantA))
		Expect(v).To(HaveKeyWithValue("scopes", []any{"renders:create", "renders:read"}))
		Expect(v).To(HaveKeyWithValue("rate_limit_rpm", 600.0))

		list := client.Do("GET", "/v1/tenants/"+tenantA+"/api-keys", adminA.Token, nil)
		Expect(list.Status).To(Equal(http.StatusOK))
		revoke := client.Do("DELETE", "/v1/tenants/"+tenantA+"/api-keys/"+k["id"].(string), adminA.Token, map[string]any{"reason": "rotated"})
		Expect(revoke.Status).To(Equal(http.StatusNoContent))
		after := client.Do("GET", "/v1/tenants/"+tenantA+"/api-keys", adminA.Token, nil)
		for _, body := range [][]byte{list.Body, after.Body, revoke.Body} {
			Expect(string(body)).NotTo(ContainSubstring(secret))
			Expect(string(body)).NotTo(ContainSubstring(secret[16:]))
		}
		var outboxData []string
		Expect(testDB().Raw("SELECT data::text FROM outbox").Scan(&outboxData).Error).To(Succeed())
		Expect(strings.Join(outboxData, "\n")).NotTo(ContainSubstring(secret[16:]))
		Expect(outboxEvents(events.SubjectApiKeyCreated, k["id"].(string))).To(Equal(1))
		Expect(outboxEvents(events.SubjectApiKeyRevoked, k["id"].(string), "rotated")).To(Equal(1))
		Expect(serviceLog.String()).NotTo(BeEmpty())
		Expect(serviceLog.String()).NotTo(ContainSubstring(secret[16:]))
	})

	It("lists a tenant's keys newest first with their use, counted without a write per call", func() {
		_, first := create(adminA, tenantA, map[string]any{"name": "one", "scopes": []string{"projects:read"}})
		_, second := create(adminA, tenantA, map[string]any{"name": "two", "scopes": []string{"projects:read"}, "environment": "Test"})
		Expect(second["secret_key"]).To(HavePrefix("ms_test_"))
		for range 3 {
			Expect(validateSecret(first["secret_key"].(string), "")).To(HaveKeyWithValue("valid", true))
		}
		var list struct {
			Data []map[string]any `json:"data"`
		}
		client.Do("GET", "/v1/tenants/"+tenantA+"/api-keys", adminA.Token, nil).JSON(&list)
		Expect(list.Data).To(HaveLen(2))
		Expect(list.Data[0]["id"]).To(Equal(second["id"]))
		Expect(list.Data[1]).To(HaveKeyWithValue("usage_count", 3.0))
		Expect(list.Data[1]["last_used_at"]).NotTo(BeNil())
		Expect(list.Data[0]).NotTo(HaveKey("secret_key"))

		Eventually(func() []int64 {
			var counts []int64
			testDB().Raw(`SELECT k.usage_count FROM api_keys k WHERE k.id = ?
				UNION ALL SELECT api_calls FROM tenant_usage_days WHERE tenant_id = ?`, first["id"], tenantA).Scan(&counts)
			return counts
		}).WithTimeout(15 * time.Second).Should(Equal([]int64{3, 3}))

		for range 2 {
			Expect(validateSecret(first["secret_key"].(string), "")).To(HaveKeyWithValue("valid", true))
		}
		Expect(validateSecret(second["secret_key"].(string), "")).To(HaveKeyWithValue("valid", true))
		Eventually(func() []int64 {
			var counts []int64
			testDB().Raw(`SELECT usage_count FROM (SELECT k.usage_count, k.name FROM api_keys k WHERE k.id IN (?, ?) ORDER BY k.name) AS keys
				UNION ALL SELECT api_calls FROM tenant_usage_days WHERE tenant_id = ?`, first["id"], second["id"], tenantA).Scan(&counts)
			return counts
		}).WithTimeout(15*time.Second).Should(Equal([]int64{5, 1, 6}), "a later flush adds to what is stored, for every key at once")
	})

	It("refuses malformed, unknown, revoked, expired and address-restricted keys", func() {
		_, v := validate(map[string]any{"key_prefix": "garbage", "key_hash": "xyz"})
		Expect(v).To(HaveKeyWithValue("valid", false))
		Expect(v).To(HaveKeyWithValue("reason", "malformed"))
		Expect(v).To(HaveKeyWithValue("scopes", []any{}))
		Expect(v["tenant_id"]).To(BeNil())

		minted, err := apikey.Mint("ms", "Live")
		Expect(err).NotTo(HaveOccurred())
		Expect(validateSecret(minted.Secret, "")).To(HaveKeyWithValue("reason", "unknown"))

		_, k := create(adminA, tenantA, map[string]any{"name": "ip", "scopes": []string{"users:read"}, "allowed_ips": []string{"203.0.113.0/24", "2001:db8::1"}})
		Expect(k).To(HaveKeyWithValue("allowed_ips", []any{"203.0.113.0/24", "2001:db8::1"}), "ranges are answered as given")
		secret := k["secret_key"].(string)
		Expect(validateSecret(secret, "203.0.113.77")).To(HaveKeyWithValue("valid", true))
		Expect(validateSecret(secret, "2001:db8::1")).To(HaveKeyWithValue("valid", true))
		Expect(validateSecret(secret, "198.51.100.1")).To(HaveKeyWithValue("reason", "ip_not_allowed"))
		Expect(validateSecret(secret, "")).To(HaveKeyWithValue("reason", "ip_not_allowed"))
		_, v = validate(map[string]any{"key_prefix": "ms_live_AAAAAAAA", "key_hash": sha256Hex(secret)})
		Expect(v).To(HaveKeyWithValue("reason", "unknown"))

		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/api-keys/"+k["id"].(string), adminA.Token, nil).Status).To(Equal(http.StatusNoContent))
		Expect(validateSecret(secret, "203.0.113.77")).To(HaveKeyWithValue("reason", "revoked"))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/api-keys/"+k["id"].(string), adminA.Token, nil).Status).To(Equal(http.StatusNoContent))
		Expect(outboxEvents(events.SubjectApiKeyRevoked, k["id"].(string))).To(Equal(1))

		_, short := create(adminA, tenantA, map[string]any{"name": "short", "scopes": []string{"users:read"},
			"expires_at": time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)})
		Expect(validateSecret(short["secret_key"].(string), "")).To(HaveKeyWithValue("valid", true))
		Eventually(func() any { return validateSecret(short["secret_key"].(string), "")["reason"] }).
			WithTimeout(5 * time.Second).Should(Equal("expired"))
	})

	It("stops validating a key revoked by another replica within a second", func() {
		_, k := create(adminA, tenantA, map[string]any{"name": "elsewhere", "scopes": []string{"renders:read"}})
		secret := k["secret_key"].(string)
		Expect(validateSecret(secret, "")).To(HaveKeyWithValue("valid", true))

		Expect(pgdb.InTx(context.Background(), testDB(), func(tx *gorm.DB) error {
			if err := tx.Exec("UPDATE api_keys SET is_active = false, revoked_at = now() WHERE id = ?", k["id"]).Error; err != nil {
				return err
			}
			_, err := outbox.NewWriter(events.SourceIdentity).Add(context.Background(), tx, events.SubjectApiKeyRevoked,
				events.SubjectApiKeyRevoked, &identityv1.ApiKeyRevoked{ApiKeyId: k["id"].(string), TenantId: tenantA})
			return err
		})).To(Succeed())
		Eventually(func() any { return validateSecret(secret, "")["reason"] }).WithTimeout(time.Second).WithPolling(20 * time.Millisecond).
			Should(Equal("revoked"))
	})

	It("limits a key to its rate with 429 and Retry-After", func() {
		_, k := create(adminA, tenantA, map[string]any{"name": "slow", "scopes": []string{"renders:read"}, "rate_limit_rpm": 2})
		secret := k["secret_key"].(string)
		body := map[string]any{"key_prefix": k["key_prefix"], "key_hash": sha256Hex(secret)}
		last := 0
		for range 4 {
			r := client.Do("POST", "/v1/api-keys/validate", gateway, body)
			last = r.Status
			if last == http.StatusTooManyRequests {
				Expect(r.Header.Get("Retry-After")).NotTo(BeEmpty())
				break
			}
		}
		Expect(last).To(Equal(http.StatusTooManyRequests))
	})

	It("refuses bad keys, too many keys and callers who may not manage them", func() {
		for _, body := range []map[string]any{
			{"name": "", "scopes": []string{"renders:read"}},
			{"name": "x", "scopes": []string{}},
			{"name": "x", "scopes": []string{"admin:all"}},
			{"name": "x", "scopes": []string{"renders:read"}, "allowed_ips": []string{"not-an-ip"}},
			{"name": "x", "scopes": []string{"renders:read"}, "rate_limit_rpm": 0},
			{"name": "x", "scopes": []string{"renders:read"}, "environment": "Prod"},
			{"name": "x", "scopes": []string{"renders:read"}, "expires_at": "2001-01-01T00:00:00Z"},
		} {
			status, _ := create(adminA, tenantA, body)
			Expect(status).To(Equal(http.StatusBadRequest), "%v", body)
		}
		ok := map[string]any{"name": "x", "scopes": []string{"renders:read"}}
		status, _ := create(userA, tenantA, ok)
		Expect(status).To(Equal(http.StatusForbidden))
		status, _ = create(adminB, tenantA, ok)
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/tenants/"+tenantA+"/api-keys", "", ok).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/api-keys", userA.Token, nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/api-keys", adminB.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/api-keys", "", nil).Status).To(Equal(http.StatusUnauthorized))

		_, k := create(adminA, tenantA, ok)
		id := k["id"].(string)
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantB+"/api-keys/"+id, adminB.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/api-keys/"+id, adminB.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/api-keys/"+id, userA.Token, nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/api-keys/"+uuid.NewString(), adminA.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/api-keys/"+id, adminA.Token, map[string]any{"reason": strings.Repeat("r", 501)}).Status).
			To(Equal(http.StatusBadRequest))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/api-keys/"+id, "", nil).Status).To(Equal(http.StatusUnauthorized))
		Expect(validateSecret(k["secret_key"].(string), "")).To(HaveKeyWithValue("valid", true))

		Expect(client.Do("POST", "/v1/api-keys/validate", adminA.Token, map[string]any{"key_prefix": "a", "key_hash": "b"}).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/api-keys/validate", "", map[string]any{"key_prefix": "a", "key_hash": "b"}).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("POST", "/v1/api-keys/validate", gateway, `{"key_prefix": 1}`).Status).To(Equal(http.StatusBadRequest))

		for range apikey.MaxActivePerTenant - 1 {
			status, _ := create(adminA, tenantA, ok)
			Expect(status).To(Equal(http.StatusCreated))
		}
		status, _ = create(adminA, tenantA, ok)
		Expect(status).To(Equal(http.StatusConflict))
	})
})
