package app_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
)

const (
	idpName         = "acme-id"
	idpClientID     = "identity-svc"
	idpClientSecret = "idp-secret"
)

// testIdP is a local OAuth 2.0 / OpenID Connect provider: codes are registered by the specs.
type testIdP struct {
	mu    sync.Mutex
	codes map[string]map[string]any
	url   string
}

var idp *testIdP

// configureTestIdP starts the local provider and configures it as provider A (the suite calls
// it before the app starts); provider B points at a closed port.
func configureTestIdP(cfg *config.Config) {
	idp = &testIdP{codes: map[string]map[string]any{}}
	srv := httptest.NewServer(http.HandlerFunc(idp.serve))
	DeferCleanup(srv.Close)
	idp.url = srv.URL
	cfg.Auth.OAuthA = config.OAuthProviderA{Name: idpName, ClientID: idpClientID, ClientSecret: idpClientSecret,
		TokenURL: srv.URL + "/token", UserInfoURL: srv.URL + "/userinfo", RedirectURI: "https://app.example.test/oauth/callback"}
	cfg.Auth.OAuthB = config.OAuthProviderB{Name: "down-sso", ClientID: "x", TokenURL: "http://127.0.0.1:1/token", UserInfoURL: "http://127.0.0.1:1/userinfo"}
}

func (p *testIdP) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/token":
		id, secret, _ := r.BasicAuth()
		info, ok := p.codes[r.FormValue("code")]
		if id != idpClientID || secret != idpClientSecret || !ok || r.FormValue("grant_type") != "authorization_code" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		delete(p.codes, r.FormValue("code"))
		tok := "at-" + uuid.NewString()
		p.codes[tok] = info
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	case "/userinfo":
		info, ok := p.codes[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(info)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// code registers a one-time authorization code for the provider account described by info.
func (p *testIdP) code(info map[string]any) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := "code-" + uuid.NewString()
	p.codes[c] = info
	return c
}

var _ = Describe("logging in with an OAuth provider", func() {
	var (
		c    authClient
		slug string
	)
	BeforeEach(func() {
		c = newAuthClient()
		slug = authTenant()
	})

	oauthLogin := func(provider, code string) (int, map[string]any) {
		GinkgoHelper()
		return c.do("POST", "/v1/auth/login/oauth/"+provider, "", map[string]any{"tenant_slug": slug, "code": code})
	}

	It("creates an account for a new provider account and logs it in again later", func() {
		sub := uuid.NewString()
		email := "o" + sub[:8] + "@example.test"
		status, body := oauthLogin(idpName, idp.code(map[string]any{"sub": sub, "email": email, "email_verified": true, "name": "Olga"}))
		Expect(status).To(Equal(http.StatusOK), "%v", body)
		user := body["user"].(map[string]any)
		Expect(user).To(HaveKeyWithValue("register_mode", idpName))
		Expect(user).To(HaveKeyWithValue("email_verified", true))
		Expect(user).To(HaveKeyWithValue("full_name", "Olga"))
		Expect(outboxEvents(events.SubjectUserRegistered, user["id"].(string))).To(Equal(1))

		status, body = oauthLogin(idpName, idp.code(map[string]any{"sub": sub, "email": "changed@example.test"}))
		Expect(status).To(Equal(http.StatusOK))
		Expect(body["user"]).To(HaveKeyWithValue("id", user["id"]), "the link is by subject")
	})

	It("links to the tenant's account with the same email when the provider verified it", func() {
		status, reg := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": slug, "email": "link@example.test", "password": authPassword})
		Expect(status).To(Equal(http.StatusCreated))

		status, body := oauthLogin(idpName, idp.code(map[string]any{"sub": uuid.NewString(), "email": "LINK@example.test", "email_verified": false}))
		Expect(status).To(Equal(http.StatusConflict), "an unverified email never takes over an account")
		Expect(body).To(HaveKeyWithValue("code", "account_exists"))

		status, body = oauthLogin(idpName, idp.code(map[string]any{"sub": uuid.NewString(), "email": "link@example.test", "email_verified": "true"}))
		Expect(status).To(Equal(http.StatusOK))
		Expect(body["user"]).To(HaveKeyWithValue("id", reg["user_id"]))
	})

	It("refuses a code the provider rejects, an unknown provider, an unknown tenant and an unreachable provider", func() {
		status, body := oauthLogin(idpName, "made-up-code")
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(body).To(HaveKeyWithValue("code", "oauth_code_rejected"))
		status, _ = oauthLogin("nope", idp.code(map[string]any{"sub": "x"}))
		Expect(status).To(Equal(http.StatusNotFound))
		status, _ = c.do("POST", "/v1/auth/login/oauth/"+idpName, "", map[string]any{"tenant_slug": "no-such-tenant", "code": "c"})
		Expect(status).To(Equal(http.StatusNotFound))
		status, _ = c.do("POST", "/v1/auth/login/oauth/"+idpName, "", map[string]any{"tenant_slug": slug, "code": ""})
		Expect(status).To(Equal(http.StatusBadRequest))
		status, _ = oauthLogin("down-sso", "any")
		Expect(status).To(Equal(http.StatusServiceUnavailable))
	})

	It("asks for the second factor of an account that has one", func() {
		sub := uuid.NewString()
		status, body := oauthLogin(idpName, idp.code(map[string]any{"sub": sub, "email": "m" + sub[:8] + "@example.test", "email_verified": true}))
		Expect(status).To(Equal(http.StatusOK))
		userID := body["user"].(map[string]any)["id"].(string)
		Expect(testDB().Exec(`INSERT INTO mfa_factors (id, user_id, tenant_id, factor_type, secret_sealed, verified_at)
			SELECT ?, id, tenant_id, 'TOTP', '\x00', now() FROM users WHERE id = ?`, uuid.NewString(), userID).Error).To(Succeed())
		status, body = oauthLogin(idpName, idp.code(map[string]any{"sub": sub}))
		Expect(status).To(Equal(http.StatusForbidden))
		Expect(body).To(HaveKey("mfa_token"))
	})
})
