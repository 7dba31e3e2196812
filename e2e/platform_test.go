package e2e

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/motionstudio/platform/pkg/authn"
)

// call sends a request with an optional bearer token and returns the status and body.
// The secrets in the request's and the answer's JSON or form bodies join the set the suite
// looks for in the service logs.
func call(method, url, token string, body io.Reader, header ...string) (int, http.Header, []byte) {
	if body != nil {
		sent, err := io.ReadAll(body)
		Expect(err).NotTo(HaveOccurred())
		secrets.addJSON(sent)
		secrets.addForm(sent)
		body = bytes.NewReader(sent)
	}
	req, err := http.NewRequest(method, url, body)
	Expect(err).NotTo(HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	secrets.addJSON(b)
	return resp.StatusCode, resp.Header, b
}

// admin runs `identity-svc admin args...` against the suite's identity database and decodes
// its JSON answer. A -password argument and the secrets of the answer join the set the suite
// looks for in the logs, and the command's log is kept for that scan.
func admin(args ...string) map[string]any {
	for i, a := range args {
		if a == "-password" && i+1 < len(args) {
			secrets.add("password", args[i+1])
		}
	}
	cmd := exec.Command(p.IdentityBin, append([]string{"admin"}, args...)...)
	cmd.Env = p.IdentityEnv
	session, err := gexec.Start(cmd, nil, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Eventually(session).WithTimeout(30*time.Second).Should(gexec.Exit(0), "identity-svc admin %v", args)
	keepAdminLog(p.ScanDir, session.Err.Contents())
	secrets.addJSON(session.Out.Contents())
	var out map[string]any
	Expect(json.Unmarshal(session.Out.Contents(), &out)).To(Succeed())
	return out
}

func serviceToken() string {
	form := url.Values{"grant_type": {"client_credentials"}}
	req, err := http.NewRequest(http.MethodPost, p.IdentityURL+"/v1/oauth/token", strings.NewReader(form.Encode()))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(p.ClientID, p.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	Expect(resp.StatusCode).To(Equal(http.StatusOK))
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
	}
	Expect(json.NewDecoder(resp.Body).Decode(&tok)).To(Succeed())
	Expect(tok.TokenType).To(Equal("Bearer"))
	Expect(tok.ExpiresIn).To(BeNumerically(">", 0))
	return tok.AccessToken
}

func jwksKeyID() string {
	code, _, body := call(http.MethodGet, p.IdentityURL+"/.well-known/jwks.json", "", nil)
	Expect(code).To(Equal(http.StatusOK))
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	Expect(json.Unmarshal(body, &set)).To(Succeed())
	Expect(set.Keys).To(HaveLen(1))
	return set.Keys[0]["kid"].(string)
}

var _ = Describe("the platform", func() {
	It("publishes identity's Ed25519 signing key as a JWKS without the private part", func() {
		code, hdr, body := call(http.MethodGet, p.IdentityURL+"/.well-known/jwks.json", "", nil)
		Expect(code).To(Equal(http.StatusOK))
		Expect(hdr.Get("Content-Type")).To(HavePrefix("application/json"))
		var set struct {
			Keys []map[string]any `json:"keys"`
		}
		Expect(json.Unmarshal(body, &set)).To(Succeed())
		Expect(set.Keys).To(HaveLen(1))
		Expect(set.Keys[0]).To(HaveKeyWithValue("kty", "OKP"))
		Expect(set.Keys[0]).To(HaveKeyWithValue("crv", "Ed25519"))
		Expect(set.Keys[0]).To(HaveKeyWithValue("alg", "EdDSA"))
		Expect(set.Keys[0]).To(HaveKey("kid"))
		Expect(set.Keys[0]).NotTo(HaveKey("d"))
	})

	It("serves each service's OpenAPI document as JSON", func() {
		for _, base := range []string{p.IdentityURL, p.ContentURL, p.AgentteamURL} {
			code, _, body := call(http.MethodGet, base+"/openapi.json", "", nil)
			Expect(code).To(Equal(http.StatusOK), base)
			var doc map[string]any
			Expect(json.Unmarshal(body, &doc)).To(Succeed())
			Expect(doc).To(HaveKeyWithValue("openapi", "3.0.3"))
		}
	})

	It("answers agentteam's module pings anonymously with the module name", func() {
		for _, module := range []string{"orgboard", "skills", "assembler"} {
			code, _, body := call(http.MethodGet, p.AgentteamURL+"/api/"+module+"/ping", "", nil)
			Expect(code).To(Equal(http.StatusOK))
			Expect(body).To(MatchJSON(`{"module":"` + module + `","status":"ok"}`))
		}
	})

	Describe("the client-credentials grant", func() {
		It("refuses a wrong secret with invalid_client", func() {
			form := url.Values{"grant_type": {"client_credentials"}, "client_id": {p.ClientID}, "client_secret": {"wrong-secret-wrong-secret"}}
			code, _, body := call(http.MethodPost, p.IdentityURL+"/v1/oauth/token", "", strings.NewReader(form.Encode()),
				"Content-Type", "application/x-www-form-urlencoded")
			Expect(code).To(Equal(http.StatusUnauthorized))
			Expect(body).To(ContainSubstring(`"error":"invalid_client"`))
		})

		It("refuses other grant types", func() {
			form := url.Values{"grant_type": {"password"}, "client_id": {p.ClientID}, "client_secret": {p.ClientSecret}}
			code, _, body := call(http.MethodPost, p.IdentityURL+"/v1/oauth/token", "", strings.NewReader(form.Encode()),
				"Content-Type", "application/x-www-form-urlencoded")
			Expect(code).To(Equal(http.StatusBadRequest))
			Expect(body).To(ContainSubstring(`"error":"unsupported_grant_type"`))
		})
	})

	Describe("a user created with the operator CLI", Ordered, func() {
		var userID, tenantID, userToken string

		BeforeAll(func() {
			tenant := admin("create-tenant", "-slug", "acme", "-name", "Acme Studio", "-email", "ops@acme.test")
			tenantID = tenant["id"].(string)
			user := admin("create-user", "-tenant", "acme", "-email", "Ada@Acme.test", "-password", "correct horse", "-name", "Ada")
			userID = user["id"].(string)
			userToken = admin("token", "-tenant", "acme", "-email", "ada@acme.test")["access_token"].(string)
		})

		It("reads itself from identity-svc", func() {
			code, _, body := call(http.MethodGet, p.IdentityURL+"/v1/users/me", userToken, nil)
			Expect(code).To(Equal(http.StatusOK))
			var me map[string]any
			Expect(json.Unmarshal(body, &me)).To(Succeed())
			Expect(me).To(HaveKeyWithValue("id", userID))
			Expect(me).To(HaveKeyWithValue("tenant_id", tenantID))
			Expect(me).To(HaveKeyWithValue("email", "ada@acme.test"))
			Expect(me).To(HaveKeyWithValue("full_name", "Ada"))
			Expect(me).NotTo(HaveKey("password_hash"))
		})

		It("is accepted by content-svc through the JWKS", func() {
			code, _, body := call(http.MethodGet, p.ContentURL+"/v1/tags", userToken, nil)
			Expect(code).To(Equal(http.StatusOK))
			expectDataEnvelope(body)
		})

		It("is accepted by agentteam-svc through the JWKS", func() {
			code, _, body := call(http.MethodGet, p.AgentteamURL+"/api/orgboard/cartable", userToken, nil)
			Expect(code).To(Equal(http.StatusOK))
			Expect(body).To(MatchJSON(`[]`))
		})

		It("is refused on the service-only render-server list, even though it is valid", func() {
			code, hdr, body := call(http.MethodGet, p.ContentURL+"/v1/project-servers", userToken, nil)
			Expect(code).To(Equal(http.StatusForbidden))
			Expect(hdr.Get("Content-Type")).To(HavePrefix("application/problem+json"))
			Expect(body).To(ContainSubstring(`"request_id"`))
		})

		DescribeTable("content-svc refuses a token that is not identity's valid one with 401",
			func(forge func() string) {
				code, hdr, body := call(http.MethodGet, p.ContentURL+"/v1/tags", forge(), nil)
				Expect(code).To(Equal(http.StatusUnauthorized))
				Expect(hdr.Get("Content-Type")).To(HavePrefix("application/problem+json"))
				Expect(string(body)).To(ContainSubstring(`"status":401`))
			},
			Entry("no token", func() string { return "" }),
			Entry("a tampered payload", func() string {
				parts := strings.Split(userToken, ".")
				claims, err := base64.RawURLEncoding.DecodeString(parts[1])
				Expect(err).NotTo(HaveOccurred())
				forged := strings.Replace(string(claims), `"adm":false`, `"adm":true`, 1)
				if forged == string(claims) {
					forged = strings.Replace(string(claims), userID, "00000000-0000-7000-8000-000000000000", 1)
				}
				Expect(forged).NotTo(Equal(string(claims)))
				parts[1] = base64.RawURLEncoding.EncodeToString([]byte(forged))
				return strings.Join(parts, ".")
			}),
			Entry("an expired token signed with identity's key", func() string {
				return sign(ed25519.NewKeyFromSeed(p.SigningSeed), jwksKeyID(), time.Now().Add(-time.Hour))
			}),
			Entry("a token signed by another key under identity's key id", func() string {
				_, other, err := ed25519.GenerateKey(rand.Reader)
				Expect(err).NotTo(HaveOccurred())
				return sign(other, jwksKeyID(), time.Now().Add(time.Hour))
			}),
			Entry("garbage", func() string { return "not-a-jwt" }),
		)

		Describe("a service token from the client-credentials grant", func() {
			It("lists render servers at content-svc", func() {
				code, _, body := call(http.MethodGet, p.ContentURL+"/v1/project-servers", serviceToken(), nil)
				Expect(code).To(Equal(http.StatusOK))
				expectDataEnvelope(body)
			})

			It("is refused where a user is required", func() {
				tok := serviceToken()
				code, _, _ := call(http.MethodGet, p.IdentityURL+"/v1/users/me", tok, nil)
				Expect(code).To(Equal(http.StatusForbidden))
				code, _, body := call(http.MethodGet, p.AgentteamURL+"/api/orgboard/cartable", tok, nil)
				Expect(code).To(Equal(http.StatusForbidden))
				Expect(body).To(BeEmpty(), "agentteam answers 403 with an empty body")
			})
		})
	})
})

// sign makes an access token for a made-up user with the given key, key id and expiry.
func sign(key ed25519.PrivateKey, kid string, exp time.Time) string {
	s, err := authn.NewSigner(key, kid, p.Issuer)
	Expect(err).NotTo(HaveOccurred())
	tok, err := s.Sign(authn.Claims{
		Subject: "0190f2c4-0000-7000-8000-000000000001", TenantID: "0190f2c4-0000-7000-8000-000000000002",
		TokenUse: authn.TokenUseAccess, Audience: []string{authn.DefaultAudience}, IssuedAt: exp.Add(-2 * time.Hour), ExpiresAt: exp,
	})
	Expect(err).NotTo(HaveOccurred())
	return tok
}

// expectDataEnvelope checks a content-svc list answer's {"data": [...]} envelope. Other specs of
// the suite (the authorization matrix) create records on the same platform, so the list's
// contents are not fixed.
func expectDataEnvelope(body []byte) {
	GinkgoHelper()
	var list struct {
		Data []map[string]any `json:"data"`
	}
	Expect(json.Unmarshal(body, &list)).To(Succeed())
	Expect(list.Data).NotTo(BeNil(), string(body))
}
