package app_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/identity-svc/api"
	"github.com/motionstudio/platform/services/identity-svc/internal/app"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
	"github.com/motionstudio/platform/services/identity-svc/internal/token"
)

// claimsOf decodes a token's header and payload without checking it.
func claimsOf(tok string) (header, payload map[string]any) {
	GinkgoHelper()
	parts := strings.Split(tok, ".")
	Expect(parts).To(HaveLen(3))
	for i, dst := range []*map[string]any{&header, &payload} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(raw, dst)).To(Succeed())
	}
	return header, payload
}

// grant asks base's token endpoint for a service token from its own address, so the specs do
// not share the per-address rate limit.
func grant(api *testkit.API, extra url.Values) testkit.Response {
	GinkgoHelper()
	v := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {clientSecret}}
	for k, vs := range extra {
		v[k] = vs
	}
	body, hdr := form(v)
	return api.Do("POST", "/v1/oauth/token", "", body, append(hdr, "X-Forwarded-For", "198.51.100."+fmt.Sprint(time.Now().UnixNano()%250+1))...)
}

var _ = Describe("discovering the issuer", func() {
	It("answers the OpenID and RFC 8414 documents with the configured issuer, its keys and token endpoint", func() {
		oidc := client.Do("GET", "/.well-known/openid-configuration", "", nil)
		Expect(oidc.Status).To(Equal(http.StatusOK))
		var doc map[string]any
		oidc.JSON(&doc)
		Expect(doc).To(HaveKeyWithValue("issuer", cfg.Issuer))
		Expect(doc).To(HaveKeyWithValue("jwks_uri", cfg.Issuer+"/.well-known/jwks.json"))
		Expect(doc).To(HaveKeyWithValue("token_endpoint", cfg.Issuer+"/v1/oauth/token"))
		Expect(doc).To(HaveKeyWithValue("grant_types_supported", ConsistOf("client_credentials")))
		Expect(doc).To(HaveKeyWithValue("token_endpoint_auth_methods_supported", ConsistOf("client_secret_basic", "client_secret_post")))
		Expect(doc).To(HaveKeyWithValue("id_token_signing_alg_values_supported", ConsistOf("EdDSA")))
		Expect(doc).To(HaveKeyWithValue("subject_types_supported", ConsistOf("public")))
		Expect(doc).To(HaveKey("response_types_supported"))

		rfc8414 := client.Do("GET", "/.well-known/oauth-authorization-server", "", nil)
		Expect(rfc8414.Status).To(Equal(http.StatusOK))
		Expect(rfc8414.Body).To(MatchJSON(oidc.Body))
	})

	It("marks each published key with its algorithm and use", func() {
		var set struct {
			Keys []map[string]any `json:"keys"`
		}
		client.Do("GET", "/.well-known/jwks.json", "", nil).JSON(&set)
		Expect(set.Keys).NotTo(BeEmpty())
		for _, k := range set.Keys {
			Expect(k).To(HaveKeyWithValue("alg", "EdDSA"))
			Expect(k).To(HaveKeyWithValue("use", "sig"))
		}
	})
})

var _ = Describe("the audiences of tokens", func() {
	It("names the configured audience in access tokens and the issuer URL in iss", func() {
		admin("create-tenant", "-slug", "aud-"+uuid.NewString()[:8], "-name", "Aud", "-email", "a@aud.test")
		_, payload := claimsOf(serviceToken())
		Expect(payload).To(HaveKeyWithValue("aud", ConsistOf(cfg.Audience)))
		Expect(payload).To(HaveKeyWithValue("iss", cfg.Issuer))
	})

	It("gives a service client the default audience, or the resources it asks for among those it may have", func() {
		r := grant(client, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var tok map[string]any
		r.JSON(&tok)
		_, payload := claimsOf(tok["access_token"].(string))
		Expect(payload).To(HaveKeyWithValue("aud", ConsistOf(cfg.Audience)))

		r = grant(client, url.Values{"resource": {"content"}, "audience": {"agentteam"}})
		Expect(r.Status).To(Equal(http.StatusOK))
		r.JSON(&tok)
		_, payload = claimsOf(tok["access_token"].(string))
		Expect(payload).To(HaveKeyWithValue("aud", ConsistOf("content", "agentteam")))

		r = grant(client, url.Values{"resource": {"content", "billing"}})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(ContainSubstring(`"error":"invalid_target"`))
	})

	It("refuses a token for another audience with 401", func() {
		key, err := token.LoadKey(token.KeySource{Inline: cfg.SigningKey})
		Expect(err).NotTo(HaveOccurred())
		kid, err := token.KeyID(key.Public())
		Expect(err).NotTo(HaveOccurred())
		signer, err := authn.NewSigner(key, kid, cfg.Issuer)
		Expect(err).NotTo(HaveOccurred())
		for _, aud := range [][]string{{"content"}, {}} {
			tok, err := signer.Sign(authn.Claims{Subject: uuid.NewString(), TenantID: uuid.NewString(), SessionID: uuid.NewString(),
				TokenUse: authn.TokenUseAccess, Audience: aud, ExpiresAt: time.Now().Add(time.Minute)})
			Expect(err).NotTo(HaveOccurred())
			Expect(client.Do("GET", "/v1/users/me", tok, nil).Status).To(Equal(http.StatusUnauthorized), "aud %v", aud)
		}
	})
})

// startReplica runs one more identity-svc on c until the spec ends and answers its client.
func startReplica(c config.Config) *testkit.API {
	GinkgoHelper()
	log := slog.New(slog.NewJSONHandler(GinkgoWriter, nil))
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, c, log)
	Expect(err).NotTo(HaveOccurred())
	addr, err := a.Listen()
	Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
		a.Close()
	})
	api := testkit.NewAPI("http://"+addr.String(), api.OpenAPI)
	Eventually(func() int { return api.Do("GET", "/readyz", "", nil).Status }).Should(Equal(http.StatusOK))
	return api
}

// kids are the key ids a replica publishes.
func kids(api *testkit.API) []string {
	GinkgoHelper()
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	api.Do("GET", "/.well-known/jwks.json", "", nil).JSON(&set)
	out := []string{}
	for _, k := range set.Keys {
		out = append(out, k.Kid)
	}
	return out
}

// unknownKey is a validation request a service token may make.
var unknownKey = map[string]any{"key_prefix": "ms_live_7Hq2Xk9B", "key_hash": strings.Repeat("ab", 32)}

var _ = Describe("rotating the signing key", func() {
	It("publishes the next key on every replica before it signs, and withdraws the retired one once its tokens expired", func() {
		c := cfg
		_, c.DB.DSN = testkit.NewDatabase("identity_keys")
		c.HTTP.Addr = "127.0.0.1:0"
		c.AccessTokenTTL, c.ServiceTokenTTL = 2*time.Second, 2*time.Second
		c.SigningKeyPrepublish, c.SigningKeyReload = 3*time.Second, 200*time.Millisecond
		log := slog.New(slog.NewJSONHandler(io.Discard, nil))
		Expect(app.Migrate(context.Background(), c, log)).To(Succeed())
		first, second := startReplica(c), startReplica(c)
		keysAdmin := func(args ...string) map[string]any {
			GinkgoHelper()
			var out strings.Builder
			Expect(app.Admin(context.Background(), c, log, append([]string{"keys"}, args...), &out)).To(Succeed())
			var m map[string]any
			Expect(json.Unmarshal([]byte(out.String()), &m)).To(Succeed())
			return m
		}
		serviceKid := func(api *testkit.API) (string, string) {
			GinkgoHelper()
			r := grant(api, nil)
			Expect(r.Status).To(Equal(http.StatusOK))
			var tok map[string]any
			r.JSON(&tok)
			header, _ := claimsOf(tok["access_token"].(string))
			return tok["access_token"].(string), header["kid"].(string)
		}
		oldToken, oldKid := serviceKid(first)
		Expect(kids(second)).To(ConsistOf(oldKid))

		next := keysAdmin("rotate")
		Expect(next).To(HaveKeyWithValue("state", token.StateNext))
		newKid := next["kid"].(string)
		for _, replica := range []*testkit.API{first, second} {
			Eventually(func() []string { return kids(replica) }).WithTimeout(2 * time.Second).Should(ConsistOf(oldKid, newKid))
		}
		_, kid := serviceKid(second)
		Expect(kid).To(Equal(oldKid), "the next key does not sign before its activation")

		for _, replica := range []*testkit.API{first, second} {
			// Each poll is a token grant: poll slowly enough to stay under the grant's rate limit.
			Eventually(func() string { _, kid := serviceKid(replica); return kid }).WithTimeout(5 * time.Second).
				WithPolling(200 * time.Millisecond).Should(Equal(newKid))
		}
		Expect(keysAdmin("list")["keys"]).To(ConsistOf(
			And(HaveKeyWithValue("kid", oldKid), HaveKeyWithValue("state", token.StateRetired)),
			And(HaveKeyWithValue("kid", newKid), HaveKeyWithValue("state", token.StateActive))))
		Expect(kids(first)).To(ConsistOf(oldKid, newKid), "the retired key stays published for its tokens")
		Expect(first.Do("POST", "/v1/api-keys/validate", oldToken, unknownKey).Status).To(Equal(http.StatusOK))

		for _, replica := range []*testkit.API{first, second} {
			Eventually(func() []string { return kids(replica) }).WithTimeout(45 * time.Second).WithPolling(time.Second).Should(ConsistOf(newKid))
		}
		key, err := token.LoadKey(token.KeySource{Inline: c.SigningKey})
		Expect(err).NotTo(HaveOccurred())
		signer, err := authn.NewSigner(ed25519.PrivateKey(key), oldKid, c.Issuer)
		Expect(err).NotTo(HaveOccurred())
		withdrawn, err := signer.Sign(authn.Claims{Subject: "service:" + clientID, TokenUse: authn.TokenUseService,
			Audience: []string{c.Audience}, ExpiresAt: time.Now().Add(time.Minute)})
		Expect(err).NotTo(HaveOccurred())
		Expect(first.Do("POST", "/v1/api-keys/validate", withdrawn, unknownKey).Status).To(Equal(http.StatusUnauthorized))
		Expect(keysAdmin("list")["keys"]).To(ContainElement(And(HaveKeyWithValue("kid", oldKid), HaveKeyWithValue("state", token.StateWithdrawn))))
	})
})
