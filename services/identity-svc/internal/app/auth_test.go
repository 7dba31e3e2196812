package app_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/password"
)

// Auth limits of the suite (app_suite_test.go): each spec calls from its own client address,
// so only the specs about limits reach them.
const (
	authIPLimit      = 40
	authAccountLimit = 5
	// authAccountAllLimit limits one account's logins from every address together.
	authAccountAllLimit = 15
	authPassword        = "correct-horse-battery"
)

var authIPs atomic.Int32

// authIP is a fresh client address; the suite trusts X-Forwarded-For from loopback.
func authIP() string {
	n := authIPs.Add(1)
	return fmt.Sprintf("198.51.%d.%d", n/250, n%250+1)
}

// authClient calls the service from one client address.
type authClient struct{ ip string }

func newAuthClient() authClient { return authClient{ip: authIP()} }

func (a authClient) do(method, path, token string, body any) (int, map[string]any) {
	GinkgoHelper()
	r := client.Do(method, path, token, body, "X-Forwarded-For", a.ip, "User-Agent", "auth-spec/1.0")
	var m map[string]any
	if len(r.Body) > 0 {
		r.JSON(&m)
	}
	return r.Status, m
}

// authAccount is a registered user with its credentials.
type authAccount struct {
	ID, TenantSlug, Email string
}

// authTenant creates a tenant with a unique slug through the operator CLI.
func authTenant() string {
	GinkgoHelper()
	slug := "auth-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	admin("create-tenant", "-slug", slug, "-name", "Auth "+slug, "-email", "it@"+slug+".test")
	return slug
}

// authRegister registers an account with an email in a new tenant.
func authRegister(c authClient) authAccount {
	GinkgoHelper()
	slug := authTenant()
	email := "u" + strings.ReplaceAll(uuid.NewString(), "-", "")[:10] + "@example.test"
	status, body := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": slug, "email": email, "password": authPassword})
	Expect(status).To(Equal(http.StatusCreated), "%v", body)
	return authAccount{ID: body["user_id"].(string), TenantSlug: slug, Email: email}
}

type authTokens struct{ Access, Refresh string }

func authLogin(c authClient, acc authAccount, device string) authTokens {
	GinkgoHelper()
	status, body := c.do("POST", "/v1/auth/login", "", map[string]any{
		"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": authPassword, "device_name": device,
	})
	Expect(status).To(Equal(http.StatusOK), "%v", body)
	return authTokens{Access: body["access_token"].(string), Refresh: body["refresh_token"].(string)}
}

// withoutRequestID drops the per-request field, so two problem documents can be compared.
func withoutRequestID(m map[string]any) map[string]any {
	delete(m, "request_id")
	return m
}

var _ = Describe("registering an account", func() {
	var c authClient
	BeforeEach(func() { c = newAuthClient() })

	It("creates an unverified account and records user.registered through the outbox", func() {
		slug := authTenant()
		status, body := c.do("POST", "/v1/auth/register", "", map[string]any{
			"tenant_slug": slug, "email": "Ada@Example.test", "phone_number": "+49 151 1234567",
			"password": authPassword, "full_name": "Ada", "accept_terms": true,
		})
		Expect(status).To(Equal(http.StatusCreated))
		Expect(body).To(HaveKeyWithValue("verification_required", true))
		id := body["user_id"].(string)
		Expect(outboxEvents(events.SubjectUserRegistered, id, "ada@example.test", "+491511234567")).To(Equal(1))

		status, body = c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": slug, "phone_number": "+491511234567", "password": authPassword})
		Expect(status).To(Equal(http.StatusOK), "a phone number logs in too")
		Expect(body["user"]).To(HaveKeyWithValue("email", "ada@example.test"))
	})

	It("refuses a second account with the same email in the tenant", func() {
		acc := authRegister(c)
		status, body := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": strings.ToUpper(acc.Email), "password": authPassword})
		Expect(status).To(Equal(http.StatusConflict))
		Expect(body).To(HaveKeyWithValue("code", "account_exists"))
	})

	It("refuses bad input, naming the fields, and writes nothing", func() {
		slug := authTenant()
		status, body := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": slug, "email": "not-an-email", "password": "short"})
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body["errors"]).To(ContainElements(HaveKeyWithValue("field", "email"), HaveKeyWithValue("field", "password")))
		status, _ = c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": slug, "password": authPassword})
		Expect(status).To(Equal(http.StatusBadRequest), "an email or a phone number is required")
		Expect(outboxEvents(events.SubjectUserRegistered, "not-an-email")).To(BeZero())
	})

	It("answers 404 for an unknown tenant and 403 for a suspended one", func() {
		status, _ := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": "no-such-tenant", "email": "a@example.test", "password": authPassword})
		Expect(status).To(Equal(http.StatusNotFound))
		slug := authTenant()
		Expect(testDB().Exec("UPDATE tenants SET status = 'Suspended' WHERE slug = ?", slug).Error).To(Succeed())
		status, body := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": slug, "email": "a@example.test", "password": authPassword})
		Expect(status).To(Equal(http.StatusForbidden))
		Expect(body).To(HaveKeyWithValue("code", "tenant_closed"))
	})

	It("limits registrations per client address with 429 and Retry-After", func() {
		slug := authTenant()
		register := func(tenant, email, password string) testkit.Response {
			return client.Do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": tenant, "email": email, "password": password},
				"X-Forwarded-For", c.ip)
		}
		for i := range authIPLimit + 1 {
			Expect(register(slug, fmt.Sprintf("r%d@example.test", i), "short").Status).
				To(Equal(http.StatusBadRequest), "invalid input is refused before it counts")
		}
		// Attempts on an unknown tenant count as well and answer at once (no password hash), so
		// the limit barely refills while they run: the first 429 comes right after the limit.
		unknown := "no-such-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
		attempts, r := 0, testkit.Response{}
		for attempts <= authIPLimit+3 && r.Status != http.StatusTooManyRequests {
			r = register(unknown, fmt.Sprintf("u%d@example.test", attempts), authPassword)
			attempts++
			if r.Status != http.StatusTooManyRequests {
				Expect(r.Status).To(Equal(http.StatusNotFound))
			}
		}
		Expect(r.Status).To(Equal(http.StatusTooManyRequests))
		Expect(attempts).To(BeNumerically(">", authIPLimit), "the first %d attempts pass", authIPLimit)
		Expect(r.Header.Get("Retry-After")).NotTo(BeEmpty())

		// A valid registration from the address is limited too (a refill lets at most one through).
		for range 3 {
			if r = register(slug, "late-"+uuid.NewString()[:8]+"@example.test", authPassword); r.Status == http.StatusTooManyRequests {
				break
			}
			Expect(r.Status).To(Equal(http.StatusCreated))
		}
		Expect(r.Status).To(Equal(http.StatusTooManyRequests))
		Expect(r.Header.Get("Retry-After")).NotTo(BeEmpty())
	})
})

var _ = Describe("logging in", func() {
	var (
		c   authClient
		acc authAccount
	)
	BeforeEach(func() {
		c = newAuthClient()
		acc = authRegister(c)
	})

	It("answers tokens with the user and the tenant, and the access token works", func() {
		status, body := c.do("POST", "/v1/auth/login", "", map[string]any{
			"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": authPassword, "device_id": "d-1", "device_name": "Laptop",
		})
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(HaveKeyWithValue("token_type", "Bearer"))
		Expect(body).To(HaveKeyWithValue("expires_in", BeNumerically("==", cfg.AccessTokenTTL.Seconds())))
		Expect(body["user"]).To(HaveKeyWithValue("id", acc.ID))
		Expect(body["tenant"]).To(HaveKeyWithValue("slug", acc.TenantSlug))
		var lastActive time.Time
		Expect(testDB().Raw("SELECT last_active_date FROM users WHERE id = ?", acc.ID).Scan(&lastActive).Error).To(Succeed())
		Expect(lastActive).To(BeTemporally("~", time.Now(), 5*time.Second), "the login stamps the last activity")
		Expect(body["user"]).To(HaveKeyWithValue("last_active_date", lastActive.UTC().Format(time.RFC3339Nano)), "and answers it as stored")

		status, me := c.do("GET", "/v1/users/me", body["access_token"].(string), nil)
		Expect(status).To(Equal(http.StatusOK))
		Expect(me).To(HaveKeyWithValue("id", acc.ID))
	})

	It("answers the same 401 for an unknown account, a wrong password and a banned account", func() {
		until := time.Now().Add(time.Hour)
		banned := authRegister(c)
		Expect(testDB().Exec("UPDATE users SET banned_at = now(), banned_until = ?, ban_reason = 'spam' WHERE id = ?", until, banned.ID).Error).To(Succeed())

		attempts := map[string]map[string]any{
			"unknown account": {"tenant_slug": acc.TenantSlug, "email": "nobody@example.test", "password": authPassword},
			"unknown tenant":  {"tenant_slug": "no-such-tenant", "email": acc.Email, "password": authPassword},
			"wrong password":  {"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": "wrong-password"},
			"banned account":  {"tenant_slug": banned.TenantSlug, "email": banned.Email, "password": authPassword},
		}
		var first map[string]any
		took := map[string]time.Duration{}
		for name, req := range attempts {
			start := time.Now()
			status, body := c.do("POST", "/v1/auth/login", "", req)
			took[name] = time.Since(start)
			Expect(status).To(Equal(http.StatusUnauthorized), name)
			if first == nil {
				first = withoutRequestID(body)
			}
			Expect(withoutRequestID(body)).To(Equal(first), name)
		}
		// Every refusal runs argon2id; a lookup miss alone takes a small fraction of that.
		slowest := slices.Max([]time.Duration{took["unknown account"], took["wrong password"], took["banned account"], took["unknown tenant"]})
		for name, d := range took {
			Expect(d).To(BeNumerically(">", slowest/10), name)
		}

		Expect(testDB().Exec("UPDATE users SET banned_until = ? WHERE id = ?", time.Now().Add(-time.Minute), banned.ID).Error).To(Succeed())
		status, _ := c.do("POST", "/v1/auth/login", "", attempts["banned account"])
		Expect(status).To(Equal(http.StatusOK), "the ban ended at its unblock date")
	})

	It("re-hashes a password stored with older argon2id parameters", func() {
		old, err := password.NewHasher(password.Params{MemoryKiB: 8 * 1024, Iterations: 1, Parallelism: 1, SaltLen: 16, KeyLen: 32}).Hash(authPassword)
		Expect(err).NotTo(HaveOccurred())
		Expect(testDB().Exec("UPDATE users SET password_hash = ? WHERE id = ?", old, acc.ID).Error).To(Succeed())
		authLogin(c, acc, "")
		var stored string
		Expect(testDB().Raw("SELECT password_hash FROM users WHERE id = ?", acc.ID).Scan(&stored).Error).To(Succeed())
		Expect(stored).To(ContainSubstring("m=19456,t=2,p=1"))
		authLogin(c, acc, "")
	})

	It("refuses a request without email and phone with 400", func() {
		status, body := c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": acc.TenantSlug, "password": authPassword})
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body["errors"]).To(ContainElement(HaveKeyWithValue("field", "email")))
	})

	It("limits attempts per account and client address with 429 and Retry-After", func() {
		var last int
		var retry string
		for i := 0; i < 2*authAccountLimit && last != http.StatusTooManyRequests; i++ {
			r := client.Do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": "wrong-password"},
				"X-Forwarded-For", c.ip)
			last, retry = r.Status, r.Header.Get("Retry-After")
			if i < authAccountLimit {
				Expect(last).To(Equal(http.StatusUnauthorized))
			}
		}
		Expect(last).To(Equal(http.StatusTooManyRequests))
		Expect(retry).NotTo(BeEmpty())
	})

	It("lets the owner log in from another address while someone else is locked out guessing", func() {
		guesser := newAuthClient()
		var last int
		for i := 0; i < 2*authAccountLimit && last != http.StatusTooManyRequests; i++ {
			last, _ = guesser.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": "wrong-password"})
		}
		Expect(last).To(Equal(http.StatusTooManyRequests), "the guesser's address is stopped")
		authLogin(c, acc, "")
	})

	It("limits attempts per account with 429 and Retry-After, whatever the address", func() {
		var last int
		var retry string
		for i := 0; i < 2*authAccountAllLimit && last != http.StatusTooManyRequests; i++ {
			r := client.Do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": "wrong-password"},
				"X-Forwarded-For", authIP())
			last, retry = r.Status, r.Header.Get("Retry-After")
		}
		Expect(last).To(Equal(http.StatusTooManyRequests))
		Expect(retry).NotTo(BeEmpty())
	})

	It("limits attempts per client address with 429", func() {
		var last int
		for i := 0; i < 2*authIPLimit && last != http.StatusTooManyRequests; i++ {
			last, _ = c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": fmt.Sprintf("n%d@example.test", i), "password": "wrong-password"})
			if i < authIPLimit-1 {
				Expect(last).To(Equal(http.StatusUnauthorized))
			}
		}
		Expect(last).To(Equal(http.StatusTooManyRequests))
	})
})

var _ = Describe("refresh tokens", func() {
	var (
		c   authClient
		acc authAccount
		tok authTokens
	)
	BeforeEach(func() {
		c = newAuthClient()
		acc = authRegister(c)
		tok = authLogin(c, acc, "Phone")
	})

	refresh := func(rt string) (int, map[string]any) {
		GinkgoHelper()
		return c.do("POST", "/v1/auth/refresh", "", map[string]any{"refresh_token": rt})
	}

	It("rotates on every use and keeps the session", func() {
		status, body := refresh(tok.Refresh)
		Expect(status).To(Equal(http.StatusOK))
		next := body["refresh_token"].(string)
		Expect(next).NotTo(Equal(tok.Refresh))
		Expect(body["user"]).To(HaveKeyWithValue("id", acc.ID))
		Expect(body["tenant"]).To(HaveKeyWithValue("slug", acc.TenantSlug), "the user and its tenant are read together")
		Expect(body["tenant"]).To(HaveKeyWithValue("status", "Active"))

		status, body = refresh(next)
		Expect(status).To(Equal(http.StatusOK))
		status, list := c.do("GET", "/v1/auth/sessions", body["access_token"].(string), nil)
		Expect(status).To(Equal(http.StatusOK))
		Expect(list["sessions"]).To(HaveLen(1), "rotation keeps one session")
	})

	It("answers the user as a write just left it, though the refresh before held it in memory", func() {
		status, body := refresh(tok.Refresh)
		Expect(status).To(Equal(http.StatusOK))
		status, _ = c.do("PATCH", "/v1/users/me", tok.Access, map[string]any{"full_name": "Renamed Right Before"})
		Expect(status).To(Equal(http.StatusOK))
		status, body = refresh(body["refresh_token"].(string))
		Expect(status).To(Equal(http.StatusOK))
		Expect(body["user"]).To(HaveKeyWithValue("full_name", "Renamed Right Before"))
	})

	It("revokes the whole session when a rotated token is used again (grace is 0 in this suite)", func() {
		_, body := refresh(tok.Refresh)
		next, access := body["refresh_token"].(string), body["access_token"].(string)

		status, body := refresh(tok.Refresh)
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(body).To(HaveKeyWithValue("code", "refresh_token_reused"))

		status, _ = refresh(next)
		Expect(status).To(Equal(http.StatusUnauthorized), "the newest refresh token of the session is dead too")
		status, body = c.do("GET", "/v1/auth/sessions", access, nil)
		Expect(status).To(Equal(http.StatusUnauthorized), "so are its access tokens")
		Expect(body).To(HaveKeyWithValue("code", "session_revoked"))
		status, _ = c.do("GET", "/v1/users/me", tok.Access, nil)
		Expect(status).To(Equal(http.StatusUnauthorized))
	})

	It("refuses an unknown or empty token", func() {
		status, body := refresh("not-a-token")
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(body).To(HaveKeyWithValue("code", "invalid_refresh_token"))
		status, _ = refresh("")
		Expect(status).To(Equal(http.StatusBadRequest))
	})

	It("refuses a banned user", func() {
		Expect(testDB().Exec("UPDATE users SET banned_at = now() WHERE id = ?", acc.ID).Error).To(Succeed())
		status, _ := refresh(tok.Refresh)
		Expect(status).To(Equal(http.StatusUnauthorized))
	})

	It("refuses a user whose tenant was suspended, and revokes the session", func() {
		Expect(testDB().Exec("UPDATE tenants SET status = 'Suspended' WHERE slug = ?", acc.TenantSlug).Error).To(Succeed())
		status, _ := refresh(tok.Refresh)
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(testDB().Exec("UPDATE tenants SET status = 'Active' WHERE slug = ?", acc.TenantSlug).Error).To(Succeed())
		status, _ = c.do("GET", "/v1/auth/sessions", tok.Access, nil)
		Expect(status).To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("sessions and logout", func() {
	var (
		c           authClient
		acc         authAccount
		laptop, tab authTokens
	)
	BeforeEach(func() {
		c = newAuthClient()
		acc = authRegister(c)
		laptop = authLogin(c, acc, "Laptop")
		tab = authLogin(c, acc, "Tablet")
	})

	It("lists the caller's sessions with the device and marks the current one", func() {
		status, body := c.do("GET", "/v1/auth/sessions", laptop.Access, nil)
		Expect(status).To(Equal(http.StatusOK))
		sessions := body["sessions"].([]any)
		Expect(sessions).To(HaveLen(2))
		Expect(sessions).To(ContainElement(And(HaveKeyWithValue("device_name", "Laptop"), HaveKeyWithValue("is_current", true),
			HaveKeyWithValue("ip_address", c.ip), HaveKeyWithValue("user_agent", "auth-spec/1.0"))))
		Expect(sessions).To(ContainElement(And(HaveKeyWithValue("device_name", "Tablet"), HaveKeyWithValue("is_current", false))))
	})

	It("revokes one session by id; its tokens stop working", func() {
		_, body := c.do("GET", "/v1/auth/sessions", laptop.Access, nil)
		var tabID string
		for _, s := range body["sessions"].([]any) {
			if s.(map[string]any)["device_name"] == "Tablet" {
				tabID = s.(map[string]any)["id"].(string)
			}
		}
		status, _ := c.do("DELETE", "/v1/auth/sessions/"+tabID, laptop.Access, nil)
		Expect(status).To(Equal(http.StatusNoContent))
		status, _ = c.do("GET", "/v1/auth/sessions", tab.Access, nil)
		Expect(status).To(Equal(http.StatusUnauthorized))
		status, _ = c.do("POST", "/v1/auth/refresh", "", map[string]any{"refresh_token": tab.Refresh})
		Expect(status).To(Equal(http.StatusUnauthorized))
		status, _ = c.do("GET", "/v1/auth/sessions", laptop.Access, nil)
		Expect(status).To(Equal(http.StatusOK))
	})

	It("answers 404 for another user's session and for an unknown one", func() {
		other := authRegister(c)
		otherTok := authLogin(c, other, "Other")
		_, body := c.do("GET", "/v1/auth/sessions", otherTok.Access, nil)
		otherID := body["sessions"].([]any)[0].(map[string]any)["id"].(string)

		status, _ := c.do("DELETE", "/v1/auth/sessions/"+otherID, laptop.Access, nil)
		Expect(status).To(Equal(http.StatusNotFound))
		status, _ = c.do("DELETE", "/v1/auth/sessions/"+uuid.NewString(), laptop.Access, nil)
		Expect(status).To(Equal(http.StatusNotFound))
		status, _ = c.do("GET", "/v1/auth/sessions", otherTok.Access, nil)
		Expect(status).To(Equal(http.StatusOK), "the other user's session is untouched")
	})

	It("announces every revocation to the other services (identity.session.revoked.v1)", func() {
		sessionIDs := func(access string) map[string]string {
			_, body := c.do("GET", "/v1/auth/sessions", access, nil)
			ids := map[string]string{}
			for _, s := range body["sessions"].([]any) {
				m := s.(map[string]any)
				ids[m["device_name"].(string)] = m["id"].(string)
			}
			return ids
		}
		ids := sessionIDs(laptop.Access)
		phone := authLogin(c, acc, "Phone")
		phoneID := sessionIDs(phone.Access)["Phone"]
		revoked := func(sid string) int {
			return outboxEvents(events.SubjectSessionRevoked, `"session_id": "`+sid+`"`, `"user_id": "`+acc.ID+`"`, `"deny_until"`)
		}

		status, _ := c.do("POST", "/v1/auth/logout", laptop.Access, nil)
		Expect(status).To(Equal(http.StatusNoContent))
		Expect(revoked(ids["Laptop"])).To(Equal(1))
		Expect(revoked(ids["Tablet"])).To(BeZero())

		status, _ = c.do("DELETE", "/v1/auth/sessions/"+ids["Tablet"], phone.Access, nil)
		Expect(status).To(Equal(http.StatusNoContent))
		Expect(revoked(ids["Tablet"])).To(Equal(1))

		admin := newMember(acc.TenantSlug, "tenant-admin")
		Expect(client.Do("POST", "/v1/users/"+acc.ID+"/ban", admin.Token, map[string]any{"reason": "abuse"}).Status).To(Equal(http.StatusNoContent))
		Expect(revoked(phoneID)).To(Equal(1))
	})

	It("logs out the current session only", func() {
		status, _ := c.do("POST", "/v1/auth/logout", laptop.Access, nil)
		Expect(status).To(Equal(http.StatusNoContent))
		status, _ = c.do("GET", "/v1/users/me", laptop.Access, nil)
		Expect(status).To(Equal(http.StatusUnauthorized))
		status, _ = c.do("POST", "/v1/auth/refresh", "", map[string]any{"refresh_token": laptop.Refresh})
		Expect(status).To(Equal(http.StatusUnauthorized))
		status, _ = c.do("GET", "/v1/users/me", tab.Access, nil)
		Expect(status).To(Equal(http.StatusOK))
	})

	It("needs an access token", func() {
		status, _ := c.do("POST", "/v1/auth/logout", "", nil)
		Expect(status).To(Equal(http.StatusUnauthorized))
		status, _ = c.do("GET", "/v1/auth/sessions", "", nil)
		Expect(status).To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("changing the password", func() {
	var (
		c           authClient
		acc         authAccount
		laptop, tab authTokens
	)
	BeforeEach(func() {
		c = newAuthClient()
		acc = authRegister(c)
		laptop = authLogin(c, acc, "Laptop")
		tab = authLogin(c, acc, "Tablet")
	})

	It("changes it and revokes every other session", func() {
		status, _ := c.do("POST", "/v1/auth/password/change", laptop.Access, map[string]any{"current_password": authPassword, "new_password": "a-new-long-password"})
		Expect(status).To(Equal(http.StatusNoContent))
		status, _ = c.do("GET", "/v1/auth/sessions", tab.Access, nil)
		Expect(status).To(Equal(http.StatusUnauthorized))
		status, body := c.do("GET", "/v1/auth/sessions", laptop.Access, nil)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body["sessions"]).To(HaveLen(1))

		status, _ = c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": authPassword})
		Expect(status).To(Equal(http.StatusUnauthorized))
		status, _ = c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": "a-new-long-password"})
		Expect(status).To(Equal(http.StatusOK))
	})

	It("refuses a wrong current password and a short new one with 400", func() {
		status, body := c.do("POST", "/v1/auth/password/change", laptop.Access, map[string]any{"current_password": "wrong-password", "new_password": "a-new-long-password"})
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body).To(HaveKeyWithValue("code", "wrong_password"))
		status, _ = c.do("POST", "/v1/auth/password/change", laptop.Access, map[string]any{"current_password": authPassword, "new_password": "short"})
		Expect(status).To(Equal(http.StatusBadRequest))
		status, _ = c.do("GET", "/v1/auth/sessions", tab.Access, nil)
		Expect(status).To(Equal(http.StatusOK), "nothing changed")
	})
})
