package authn_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/logx"
	"github.com/motionstudio/platform/pkg/testkit"
)

// app is an echo app guarded by a verifier, answering errors like a service does.
type app struct{ e *echo.Echo }

func newApp(v *authn.Verifier) app {
	e := echo.New()
	e.HTTPErrorHandler = httpx.ErrorHandler(httpx.ProblemJSON, logx.New(GinkgoWriter, "authn-test", "debug"))
	whoami := func(c echo.Context) error {
		fromEcho, fromCtx := authn.FromContext(c), authn.FromCtx(c.Request().Context())
		Expect(fromCtx).To(Equal(fromEcho))
		return c.JSON(http.StatusOK, map[string]any{"sub": fromEcho.Subject, "tid": fromEcho.TenantID, "service": fromEcho.IsService()})
	}
	e.GET("/user", whoami, v.RequireUser())
	e.GET("/service", whoami, v.RequireService())
	e.GET("/admin", whoami, v.RequireAdmin())
	e.GET("/either", whoami, v.UserOrService())
	e.GET("/open", func(c echo.Context) error {
		Expect(authn.FromContext(c)).To(BeNil())
		return c.NoContent(http.StatusNoContent)
	})
	return app{e: e}
}

// call requests path with the Authorization header (when not empty) and returns the status and
// the problem code.
func (a app) call(path, authorization string) (int, string) {
	GinkgoHelper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	a.e.ServeHTTP(rec, req)
	if rec.Code >= 400 {
		var p struct {
			Code string `json:"code"`
		}
		Expect(json.Unmarshal(rec.Body.Bytes(), &p)).To(Succeed(), rec.Body.String())
		if rec.Code == http.StatusUnauthorized {
			Expect(rec.Header().Get("WWW-Authenticate")).To(Equal("Bearer"))
		}
		return rec.Code, p.Code
	}
	return rec.Code, ""
}

// statusOf is the status of call.
func (a app) statusOf(path, authorization string) int {
	GinkgoHelper()
	status, _ := a.call(path, authorization)
	return status
}

func bearer(token string) string { return "Bearer " + token }

// segments splits a compact JWS and decodes its header and payload.
func segments(token string) (header, payload map[string]any, signature string) {
	GinkgoHelper()
	parts := strings.Split(token, ".")
	Expect(parts).To(HaveLen(3))
	decode := func(s string) map[string]any {
		b, err := base64.RawURLEncoding.DecodeString(s)
		Expect(err).NotTo(HaveOccurred())
		var m map[string]any
		Expect(json.Unmarshal(b, &m)).To(Succeed())
		return m
	}
	return decode(parts[0]), decode(parts[1]), parts[2]
}

func encode(m map[string]any) string {
	GinkgoHelper()
	b, err := json.Marshal(m)
	Expect(err).NotTo(HaveOccurred())
	return base64.RawURLEncoding.EncodeToString(b)
}

var _ = Describe("verifying tokens from the JWKS of the issuer", func() {
	var (
		issuer   *testkit.Issuer
		verifier *authn.Verifier
		a        app
		ctx      context.Context
	)

	BeforeEach(func() {
		issuer = testkit.NewIssuer()
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(context.Background())
		DeferCleanup(cancel)
		var err error
		verifier, err = authn.NewVerifier(ctx, authn.VerifierConfig{
			JWKSURL:    issuer.JWKSURL(),
			Issuer:     issuer.IssuerName(),
			MinRefresh: time.Second,
		})
		Expect(err).NotTo(HaveOccurred())
		a = newApp(verifier)
	})

	It("learns a key published ahead of use, and forgets a withdrawn one, by refreshing in the background", func() {
		background, err := authn.NewVerifier(ctx, authn.VerifierConfig{
			JWKSURL: issuer.JWKSURL(), Issuer: issuer.IssuerName(), Audience: authn.DefaultAudience,
			// No on-demand fetch after the first: only the background refresh can learn keys.
			MinRefresh: time.Hour, RefreshInterval: time.Second,
		})
		Expect(err).NotTo(HaveOccurred())
		_, err = background.Verify(ctx, issuer.UserToken("u", "t", false))
		Expect(err).NotTo(HaveOccurred())
		old := issuer.Signer()
		issuer.Rotate()
		Eventually(func() error {
			_, err := background.Verify(ctx, issuer.UserToken("u", "t", false))
			return err
		}).WithTimeout(5 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

		issuer.Withdraw(old.PublicKey().KeyID())
		Eventually(func() error {
			token, err := old.Sign(authn.Claims{Subject: "u", TokenUse: authn.TokenUseAccess,
				Audience: []string{authn.DefaultAudience}, ExpiresAt: time.Now().Add(time.Minute)})
			Expect(err).NotTo(HaveOccurred())
			_, err = background.Verify(ctx, token)
			return err
		}).WithTimeout(5 * time.Second).WithPolling(200 * time.Millisecond).Should(MatchError(ContainSubstring("unknown key id")))
	})

	It("admits a valid user token and exposes its claims", func() {
		user, tenant := uuid.NewString(), uuid.NewString()
		req := httptest.NewRequest(http.MethodGet, "/user", nil)
		req.Header.Set("Authorization", bearer(issuer.UserToken(user, tenant, false)))
		rec := httptest.NewRecorder()
		a.e.ServeHTTP(rec, req)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(rec.Body.String()).To(MatchJSON(`{"sub":"` + user + `","tid":"` + tenant + `","service":false}`))
	})

	It("leaves unguarded routes without claims", func() {
		Expect(a.statusOf("/open", "")).To(Equal(http.StatusNoContent))
	})

	It("refuses a missing or non-bearer authorization with 401", func() {
		status, code := a.call("/user", "")
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(code).To(Equal("missing_token"))

		status, _ = a.call("/user", "Basic dXNlcjpwYXNz")
		Expect(status).To(Equal(http.StatusUnauthorized))

		status, code = a.call("/user", "Bearer not-a-jwt")
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(code).To(Equal("invalid_token"))
	})

	It("refuses a token whose payload was tampered with", func() {
		token := issuer.UserToken(uuid.NewString(), uuid.NewString(), false)
		header, payload, sig := segments(token)
		payload["adm"] = true
		tampered := encode(header) + "." + encode(payload) + "." + sig

		status, code := a.call("/admin", bearer(tampered))
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(code).To(Equal("invalid_token"))
	})

	It("refuses an expired token but tolerates a little clock skew", func() {
		expired := issuer.Token(authn.Claims{Subject: "u", TokenUse: authn.TokenUseAccess,
			ExpiresAt: time.Now().Add(-2 * time.Minute)})
		status, code := a.call("/user", bearer(expired))
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(code).To(Equal("token_expired"))

		justExpired := issuer.Token(authn.Claims{Subject: "u", TokenUse: authn.TokenUseAccess,
			ExpiresAt: time.Now().Add(-5 * time.Second)})
		Expect(a.statusOf("/user", bearer(justExpired))).To(Equal(http.StatusOK))
	})

	It("refuses a token signed by another key under the same kid", func() {
		kid := currentKid(issuer)
		_, other, err := ed25519.GenerateKey(rand.Reader)
		Expect(err).NotTo(HaveOccurred())
		forger, err := authn.NewSigner(other, kid, issuer.IssuerName())
		Expect(err).NotTo(HaveOccurred())
		forged, err := forger.Sign(authn.Claims{Subject: "u", TokenUse: authn.TokenUseAccess, Admin: true,
			ExpiresAt: time.Now().Add(time.Hour)})
		Expect(err).NotTo(HaveOccurred())

		status, code := a.call("/admin", bearer(forged))
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(code).To(Equal("invalid_token"))
	})

	It("refuses an unsigned token (alg none)", func() {
		header, payload, _ := segments(issuer.UserToken("u", "t", true))
		header["alg"] = "none"
		unsigned := encode(header) + "." + encode(payload) + "."

		status, _ := a.call("/user", bearer(unsigned))
		Expect(status).To(Equal(http.StatusUnauthorized))
	})

	It("refuses a token MACed with the public key (HS256 confusion)", func() {
		header, payload, _ := segments(issuer.UserToken("u", "t", true))
		header["alg"] = "HS256"
		signingInput := encode(header) + "." + encode(payload)
		mac := hmac.New(sha256.New, publicKeyBytes(issuer))
		mac.Write([]byte(signingInput))
		confused := signingInput + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))

		status, _ := a.call("/admin", bearer(confused))
		Expect(status).To(Equal(http.StatusUnauthorized))
	})

	It("refuses a token from another issuer", func() {
		foreign := issuer.Token(authn.Claims{Issuer: "https://evil.example", Subject: "u",
			TokenUse: authn.TokenUseAccess, ExpiresAt: time.Now().Add(time.Hour)})
		status, code := a.call("/user", bearer(foreign))
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(code).To(Equal("invalid_token"))
	})

	It("admits each kind of caller only where it belongs", func() {
		user := bearer(issuer.UserToken(uuid.NewString(), uuid.NewString(), false))
		admin := bearer(issuer.UserToken(uuid.NewString(), uuid.NewString(), true))
		service := bearer(issuer.ServiceToken("content-svc"))

		Expect(a.statusOf("/user", service)).To(Equal(http.StatusForbidden))
		Expect(a.statusOf("/service", user)).To(Equal(http.StatusForbidden))
		Expect(a.statusOf("/service", admin)).To(Equal(http.StatusForbidden))
		Expect(a.statusOf("/admin", user)).To(Equal(http.StatusForbidden))
		Expect(a.statusOf("/admin", service)).To(Equal(http.StatusForbidden))

		Expect(a.statusOf("/user", admin)).To(Equal(http.StatusOK))
		Expect(a.statusOf("/admin", admin)).To(Equal(http.StatusOK))
		Expect(a.statusOf("/service", service)).To(Equal(http.StatusOK))
		Expect(a.statusOf("/either", user)).To(Equal(http.StatusOK))
		Expect(a.statusOf("/either", service)).To(Equal(http.StatusOK))
	})

	It("picks up a rotated key without a restart and still accepts the old one", func() {
		before := issuer.UserToken("u", "t", false)
		Expect(a.statusOf("/user", bearer(before))).To(Equal(http.StatusOK))

		issuer.Rotate()
		after := issuer.UserToken("u", "t", false)
		Expect(currentKid(issuer)).NotTo(Equal(kidOf(before)))

		Eventually(func() int {
			status, _ := a.call("/user", bearer(after))
			return status
		}).WithTimeout(5 * time.Second).Should(Equal(http.StatusOK))
		Expect(a.statusOf("/user", bearer(before))).To(Equal(http.StatusOK))
	})

	It("refuses a token signed with a key id the issuer never published", func() {
		Expect(a.statusOf("/user", bearer(issuer.UserToken("u", "t", false)))).To(Equal(http.StatusOK))
		_, other, err := ed25519.GenerateKey(rand.Reader)
		Expect(err).NotTo(HaveOccurred())
		stranger, err := authn.NewSigner(other, "unpublished", issuer.IssuerName())
		Expect(err).NotTo(HaveOccurred())
		token, err := stranger.Sign(authn.Claims{Subject: "u", TokenUse: authn.TokenUseAccess, ExpiresAt: time.Now().Add(time.Hour)})
		Expect(err).NotTo(HaveOccurred())

		_, err = verifier.Verify(ctx, token)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unauthenticated))
	})
})

// revokedSessions is a deny list of session ids.
type revokedSessions map[string]bool

func (r revokedSessions) Revoked(sessionID string) bool { return r[sessionID] }

func (r revokedSessions) TenantRevoked(string, time.Time) bool { return false }

// suspendedTenants refuses the tokens of each tenant issued before its cutoff.
type suspendedTenants map[string]time.Time

func (suspendedTenants) Revoked(string) bool { return false }

func (s suspendedTenants) TenantRevoked(tenantID string, issuedAt time.Time) bool {
	cutoff, ok := s[tenantID]
	return ok && issuedAt.Before(cutoff)
}

var _ = Describe("refusing the tokens of suspended tenants", func() {
	It("answers 401 session_revoked for a token of the tenant issued before the cutoff, and admits later and other tokens", func() {
		issuer := testkit.NewIssuer()
		now := time.Now().Truncate(time.Second)
		verifier, err := authn.NewVerifier(context.Background(), authn.VerifierConfig{
			JWKSURL: issuer.JWKSURL(), Issuer: issuer.IssuerName(), Revocations: suspendedTenants{"suspended": now},
		})
		Expect(err).NotTo(HaveOccurred())
		a := newApp(verifier)
		token := func(tenant string, iat time.Time) string {
			return bearer(issuer.Token(authn.Claims{Subject: "u", TenantID: tenant, SessionID: uuid.NewString(),
				TokenUse: authn.TokenUseAccess, IssuedAt: iat, ExpiresAt: time.Now().Add(time.Minute)}))
		}
		status, code := a.call("/user", token("suspended", now.Add(-2*time.Second)))
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(code).To(Equal("session_revoked"))
		Expect(a.statusOf("/user", token("suspended", now))).To(Equal(http.StatusOK))
		Expect(a.statusOf("/user", token("other", now.Add(-2*time.Second)))).To(Equal(http.StatusOK))
		Expect(a.statusOf("/service", bearer(issuer.ServiceToken("render")))).To(Equal(http.StatusOK))
	})
})

var _ = Describe("refusing the tokens of revoked sessions", func() {
	It("answers 401 session_revoked for a revoked session and admits the others", func() {
		issuer := testkit.NewIssuer()
		revoked := uuid.NewString()
		verifier, err := authn.NewVerifier(context.Background(), authn.VerifierConfig{
			JWKSURL: issuer.JWKSURL(), Issuer: issuer.IssuerName(), Revocations: revokedSessions{revoked: true},
		})
		Expect(err).NotTo(HaveOccurred())
		a := newApp(verifier)
		token := func(sid string) string {
			return bearer(issuer.Token(authn.Claims{Subject: "u", TenantID: "t", SessionID: sid,
				TokenUse: authn.TokenUseAccess, ExpiresAt: time.Now().Add(time.Minute)}))
		}
		status, code := a.call("/user", token(revoked))
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(code).To(Equal("session_revoked"))
		status, _ = a.call("/user", token(uuid.NewString()))
		Expect(status).To(Equal(http.StatusOK))
		status, _ = a.call("/service", bearer(issuer.ServiceToken("render")))
		Expect(status).To(Equal(http.StatusOK))
	})

	It("refuses a token it admitted (and remembers) once its session is revoked", func() {
		issuer := testkit.NewIssuer()
		revoked := revokedSessions{}
		verifier, err := authn.NewVerifier(context.Background(), authn.VerifierConfig{
			JWKSURL: issuer.JWKSURL(), Issuer: issuer.IssuerName(), Revocations: revoked,
		})
		Expect(err).NotTo(HaveOccurred())
		a := newApp(verifier)
		sid := uuid.NewString()
		token := bearer(issuer.Token(authn.Claims{Subject: "u", TenantID: "t", SessionID: sid,
			TokenUse: authn.TokenUseAccess, ExpiresAt: time.Now().Add(time.Minute)}))
		status, _ := a.call("/user", token)
		Expect(status).To(Equal(http.StatusOK))
		revoked[sid] = true
		status, code := a.call("/user", token)
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(code).To(Equal("session_revoked"))
	})
})

var _ = Describe("starting before the issuer is reachable", func() {
	It("starts without the JWKS and verifies within a second or two of its issuer coming back", func() {
		issuer := testkit.NewIssuer()
		jwks, err := url.Parse(issuer.JWKSURL())
		Expect(err).NotTo(HaveOccurred())
		proxy := testkit.NewTCPProxy(jwks.Host)
		proxy.Cut()
		jwks.Host = proxy.Addr()
		ctx, cancel := context.WithCancel(context.Background())
		DeferCleanup(cancel)

		// The default MinRefresh (30 s) limits refetches for unknown key ids; a process that never
		// fetched the set retries sooner, since it can check no token at all meanwhile.
		verifier, err := authn.NewVerifier(ctx, authn.VerifierConfig{JWKSURL: jwks.String(), Issuer: issuer.IssuerName()})
		Expect(err).NotTo(HaveOccurred())

		token := issuer.UserToken("u", "t", false)
		for range 3 {
			_, err = verifier.Verify(ctx, token)
			e, ok := apperr.As(err)
			Expect(ok).To(BeTrue(), "%v", err)
			Expect(e.Kind).To(Equal(apperr.Unavailable))
			Expect(e.RetryAfter).To(BeNumerically(">", 0))
			Expect(e.RetryAfter).To(BeNumerically("<=", time.Second))
		}

		proxy.Restore()
		Eventually(func() error {
			_, err := verifier.Verify(ctx, token)
			return err
		}).WithTimeout(3 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	})
})

var _ = Describe("a slow issuer", func() {
	It("makes the first tokens wait for one fetch, each only until its own deadline", func() {
		issuer := testkit.NewIssuer()
		var fetches atomic.Int32
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fetches.Add(1)
			<-release
			res, err := http.Get(issuer.JWKSURL())
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer res.Body.Close()
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.Copy(w, res.Body)
		}))
		DeferCleanup(slow.Close)
		var once sync.Once
		DeferCleanup(func() { once.Do(func() { close(release) }) })
		ctx, cancel := context.WithCancel(context.Background())
		DeferCleanup(cancel)
		verifier, err := authn.NewVerifier(ctx, authn.VerifierConfig{JWKSURL: slow.URL, Issuer: issuer.IssuerName()})
		Expect(err).NotTo(HaveOccurred())

		token := issuer.UserToken("u", "t", false)
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		started := time.Now()
		for range 20 {
			wg.Go(func() {
				rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
				_, err := verifier.Verify(rctx, token)
				errs <- err
			})
		}
		wg.Wait()
		Expect(time.Since(started)).To(BeNumerically("<", 2*time.Second))
		close(errs)
		for err := range errs {
			e, ok := apperr.As(err)
			Expect(ok).To(BeTrue(), "%v", err)
			Expect(e.Kind).To(Equal(apperr.Unavailable))
		}
		Expect(fetches.Load()).To(Equal(int32(1)))

		once.Do(func() { close(release) })
		Eventually(func() error {
			_, err := verifier.Verify(ctx, token)
			return err
		}).WithTimeout(3 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
		Expect(fetches.Load()).To(Equal(int32(1)))
	})
})

var _ = Describe("signing and verifying without HTTP", func() {
	DescribeTable("signs with the algorithm of its key and publishes the key for it",
		func(newKey func() crypto.Signer, alg string) {
			signer, err := authn.NewSigner(newKey(), "k-"+alg, "https://identity.example")
			Expect(err).NotTo(HaveOccurred())
			Expect(signer.Algorithm()).To(Equal(alg))
			token, err := signer.Sign(authn.Claims{Subject: "u", TokenUse: authn.TokenUseAccess,
				Audience: []string{"motionstudio"}, ExpiresAt: time.Now().Add(time.Minute)})
			Expect(err).NotTo(HaveOccurred())
			header, _, _ := segments(token)
			Expect(header).To(HaveKeyWithValue("alg", alg))

			_, err = jwt.Parse([]byte(token), jwt.WithKey(jwa.SignatureAlgorithm(alg), signer.PublicKey()))
			Expect(err).NotTo(HaveOccurred(), "jwx verifies the signature")
			c, err := authn.NewStaticVerifier(signer.PublicSet(), "https://identity.example", "motionstudio").Verify(context.Background(), token)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Audience).To(Equal([]string{"motionstudio"}))

			b, err := json.Marshal(signer.PublicSet())
			Expect(err).NotTo(HaveOccurred())
			var set struct {
				Keys []map[string]any `json:"keys"`
			}
			Expect(json.Unmarshal(b, &set)).To(Succeed())
			Expect(set.Keys).To(ConsistOf(SatisfyAll(HaveKeyWithValue("alg", alg), HaveKeyWithValue("use", "sig"), Not(HaveKey("d")))))
		},
		Entry("Ed25519", func() crypto.Signer { _, k, _ := ed25519.GenerateKey(rand.Reader); return k }, "EdDSA"),
		Entry("ECDSA P-256", func() crypto.Signer { k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader); return k }, "ES256"),
		Entry("RSA 2048", func() crypto.Signer { k, _ := rsa.GenerateKey(rand.Reader, 2048); return k }, "RS256"),
	)

	It("refuses keys it cannot sign safely with", func() {
		small, err := rsa.GenerateKey(rand.Reader, 1024)
		Expect(err).NotTo(HaveOccurred())
		_, err = authn.NewSigner(small, "k", "iss")
		Expect(err).To(MatchError(ContainSubstring("2048")))
		p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		Expect(err).NotTo(HaveOccurred())
		_, err = authn.NewSigner(p384, "k", "iss")
		Expect(err).To(MatchError(ContainSubstring("P-256")))
	})

	It("admits a token only for the verifier's audience", func() {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		Expect(err).NotTo(HaveOccurred())
		signer, err := authn.NewSigner(key, "k1", "iss")
		Expect(err).NotTo(HaveOccurred())
		verifier := authn.NewStaticVerifier(signer.PublicSet(), "iss", "content")
		sign := func(aud ...string) string {
			token, err := signer.Sign(authn.Claims{Subject: "s", TokenUse: authn.TokenUseService, Audience: aud, ExpiresAt: time.Now().Add(time.Minute)})
			Expect(err).NotTo(HaveOccurred())
			return token
		}
		_, err = verifier.Verify(context.Background(), sign("agentteam", "content"))
		Expect(err).NotTo(HaveOccurred())
		for _, token := range []string{sign("agentteam"), sign()} {
			_, err = verifier.Verify(context.Background(), token)
			Expect(err).To(HaveOccurred())
			e, ok := apperr.As(err)
			Expect(ok).To(BeTrue())
			Expect(e.Kind).To(Equal(apperr.Unauthenticated))
		}
	})

	It("round-trips every claim and fills iss, iat and jti", func() {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		Expect(err).NotTo(HaveOccurred())
		signer, err := authn.NewSigner(key, "k1", "https://identity.example")
		Expect(err).NotTo(HaveOccurred())
		verifier := authn.NewStaticVerifier(signer.PublicSet(), "https://identity.example", "")

		exp := time.Now().Add(10 * time.Minute).Truncate(time.Second)
		token, err := signer.Sign(authn.Claims{
			Subject: "client-1", TenantID: "t1", SessionID: "s1", TenantAdmin: true,
			TokenUse: authn.TokenUseService, Scopes: []string{"content:read", "content:write"}, ExpiresAt: exp,
		})
		Expect(err).NotTo(HaveOccurred())
		header, _, _ := segments(token)
		Expect(header).To(HaveKeyWithValue("alg", "EdDSA"))
		Expect(header).To(HaveKeyWithValue("kid", "k1"))

		c, err := verifier.Verify(context.Background(), token)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Issuer).To(Equal("https://identity.example"))
		Expect(c.Subject).To(Equal("client-1"))
		Expect(c.TenantID).To(Equal("t1"))
		Expect(c.SessionID).To(Equal("s1"))
		Expect(c.TenantAdmin).To(BeTrue())
		Expect(c.Admin).To(BeFalse())
		Expect(c.IsService()).To(BeTrue())
		Expect(c.Scopes).To(Equal([]string{"content:read", "content:write"}))
		Expect(c.ExpiresAt.Equal(exp)).To(BeTrue())
		Expect(c.IssuedAt).To(BeTemporally("~", time.Now(), 2*time.Second))
		id, err := uuid.Parse(c.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(id.Version()).To(Equal(uuid.Version(7)))
	})

	It("answers a token verified before with the same claims, and never past its expiry", func() {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		Expect(err).NotTo(HaveOccurred())
		signer, err := authn.NewSigner(key, "k1", "iss")
		Expect(err).NotTo(HaveOccurred())
		verifier := authn.NewStaticVerifier(signer.PublicSet(), "iss", "")
		token, err := signer.Sign(authn.Claims{Subject: "u", TokenUse: authn.TokenUseAccess, Scopes: []string{"a"}, ExpiresAt: time.Now().Add(2 * time.Second)})
		Expect(err).NotTo(HaveOccurred())

		first, err := verifier.Verify(context.Background(), token)
		Expect(err).NotTo(HaveOccurred())
		first.Scopes[0] = "changed by a caller"
		again, err := verifier.Verify(context.Background(), token)
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Subject).To(Equal("u"))
		Expect(again.Scopes).To(Equal([]string{"a"}), "a caller's change does not reach the kept claims")

		Eventually(func() error {
			_, err := verifier.Verify(context.Background(), token)
			return err
		}).WithTimeout(45 * time.Second).WithPolling(500 * time.Millisecond).Should(MatchError(ContainSubstring("expired")))
	})

	It("signs exactly the token jwx signs for the same claims and key", func() {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		Expect(err).NotTo(HaveOccurred())
		kid := "k1 <&>"
		signer, err := authn.NewSigner(key, kid, "https://identity.example/")
		Expect(err).NotTo(HaveOccurred())
		verifier := authn.NewStaticVerifier(signer.PublicSet(), "https://identity.example/", "")
		now := time.Now()
		for i, c := range []authn.Claims{
			{Subject: uuid.NewString(), TenantID: uuid.NewString(), SessionID: uuid.NewString(), TokenUse: authn.TokenUseAccess},
			{Subject: "u", TenantID: "t", SessionID: "s", Admin: true, TenantAdmin: true, TokenUse: authn.TokenUseAccess},
			{Subject: "u", TenantAdmin: true, TokenUse: authn.TokenUseAccess},
			{Subject: "service:content", TokenUse: authn.TokenUseService, Scopes: []string{"content:read", "content:write"}},
			{Subject: `a"quote\back<lt>gt&amp` + "\x01\tü€😀\u2028\xff", TenantID: "</script>", TokenUse: authn.TokenUseService, Scopes: []string{"<", "&"}},
			{Subject: "u", TokenUse: authn.TokenUseAccess, Issuer: "other-issuer", ID: "fixed-id"},
			{Subject: "u", TokenUse: authn.TokenUseAccess, Audience: []string{"motionstudio"}},
			{Subject: "u", Admin: true, TokenUse: authn.TokenUseService, Audience: []string{"content", "<agentteam&>"}},
		} {
			c.IssuedAt, c.ExpiresAt = now.Add(time.Duration(i)*time.Millisecond), now.Add(time.Hour+time.Duration(i)*time.Second)
			if c.ID == "" {
				c.ID = uuid.NewString()
			}
			token, err := signer.Sign(c)
			Expect(err).NotTo(HaveOccurred())
			Expect(token).To(Equal(jwxSigned(key, kid, "https://identity.example/", c)), "claims %d", i)
			if c.Issuer == "" {
				got, err := verifier.Verify(context.Background(), token)
				Expect(err).NotTo(HaveOccurred())
				Expect(got.Subject).To(Equal(strings.ToValidUTF8(c.Subject, "\uFFFD")))
			}
		}
	})

	It("refuses to sign without an expiry or with an unknown token use", func() {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		Expect(err).NotTo(HaveOccurred())
		signer, err := authn.NewSigner(key, "k1", "iss")
		Expect(err).NotTo(HaveOccurred())
		_, err = signer.Sign(authn.Claims{TokenUse: authn.TokenUseAccess})
		Expect(err).To(MatchError(ContainSubstring("exp is required")))
		_, err = signer.Sign(authn.Claims{TokenUse: "refresh", ExpiresAt: time.Now().Add(time.Minute)})
		Expect(err).To(MatchError(ContainSubstring("token_use")))
	})

	It("publishes only the public key, marked for EdDSA signatures", func() {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		Expect(err).NotTo(HaveOccurred())
		signer, err := authn.NewSigner(key, "k1", "iss")
		Expect(err).NotTo(HaveOccurred())
		b, err := json.Marshal(signer.PublicSet())
		Expect(err).NotTo(HaveOccurred())
		var set struct {
			Keys []map[string]any `json:"keys"`
		}
		Expect(json.Unmarshal(b, &set)).To(Succeed())
		Expect(set.Keys).To(HaveLen(1))
		Expect(set.Keys[0]).To(HaveKeyWithValue("kid", "k1"))
		Expect(set.Keys[0]).To(HaveKeyWithValue("alg", "EdDSA"))
		Expect(set.Keys[0]).To(HaveKeyWithValue("use", "sig"))
		Expect(set.Keys[0]).To(HaveKeyWithValue("crv", "Ed25519"))
		Expect(set.Keys[0]).NotTo(HaveKey("d"))
	})
})

// currentKid is the key id the issuer signs with now.
func currentKid(issuer *testkit.Issuer) string {
	GinkgoHelper()
	return kidOf(issuer.UserToken("u", "t", false))
}

func kidOf(token string) string {
	GinkgoHelper()
	header, _, _ := segments(token)
	return header["kid"].(string)
}

// publicKeyBytes is the raw Ed25519 public key of the issuer's current signer.
func publicKeyBytes(issuer *testkit.Issuer) []byte {
	GinkgoHelper()
	key, ok := issuer.Signer().PublicSet().Key(0)
	Expect(ok).To(BeTrue())
	var raw ed25519.PublicKey
	Expect(key.Raw(&raw)).To(Succeed())
	return raw
}

// jwxSigned is the token jwx v2 signs for c with key under kid: what Signer made before it
// built tokens itself, and must still make.
func jwxSigned(key ed25519.PrivateKey, kid, issuer string, c authn.Claims) string {
	GinkgoHelper()
	priv, err := jwk.FromRaw(key)
	Expect(err).NotTo(HaveOccurred())
	Expect(priv.Set(jwk.KeyIDKey, kid)).To(Succeed())
	Expect(priv.Set(jwk.AlgorithmKey, jwa.EdDSA)).To(Succeed())
	Expect(priv.Set(jwk.KeyUsageKey, jwk.ForSignature)).To(Succeed())
	if c.Issuer == "" {
		c.Issuer = issuer
	}
	tok := jwt.New()
	set := func(name string, v any) { Expect(tok.Set(name, v)).To(Succeed()) }
	set(jwt.IssuerKey, c.Issuer)
	set(jwt.JwtIDKey, c.ID)
	set(jwt.IssuedAtKey, c.IssuedAt)
	set(jwt.ExpirationKey, c.ExpiresAt)
	set("token_use", c.TokenUse)
	for name, v := range map[string]string{jwt.SubjectKey: c.Subject, "tid": c.TenantID, "sid": c.SessionID, "scope": strings.Join(c.Scopes, " ")} {
		if v != "" {
			set(name, v)
		}
	}
	if c.Admin {
		set("adm", true)
	}
	if len(c.Audience) > 0 {
		set(jwt.AudienceKey, c.Audience)
	}
	if c.TenantAdmin {
		set("tadm", true)
	}
	raw, err := jwt.Sign(tok, jwt.WithKey(jwa.EdDSA, priv))
	Expect(err).NotTo(HaveOccurred())
	return string(raw)
}
