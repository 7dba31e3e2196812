package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// grantFor asks identity for a service token for the given resource (none: the default).
func grantFor(resource string) string {
	GinkgoHelper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {p.ClientID}, "client_secret": {p.ClientSecret}}
	if resource != "" {
		form.Set("resource", resource)
	}
	code, _, body := call(http.MethodPost, p.IdentityURL+"/v1/oauth/token", "", strings.NewReader(form.Encode()),
		"Content-Type", "application/x-www-form-urlencoded")
	Expect(code).To(Equal(http.StatusOK), "%s", body)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	Expect(json.Unmarshal(body, &tok)).To(Succeed())
	return tok.AccessToken
}

var _ = Describe("verifying identity's tokens with a standard OpenID Connect library", Ordered, func() {
	var provider *oidc.Provider

	BeforeAll(func() {
		var err error
		provider, err = oidc.NewProvider(context.Background(), p.IdentityURL)
		Expect(err).NotTo(HaveOccurred(), "discovery finds the issuer at its own URL")
		Expect(provider.Endpoint().TokenURL).To(Equal(p.IdentityURL + "/v1/oauth/token"))
	})

	It("verifies a user access token, its issuer and its audience", func() {
		admin("create-tenant", "-slug", "oidc-lib", "-name", "OIDC", "-email", "ops@oidc.test")
		admin("create-user", "-tenant", "oidc-lib", "-email", "olga@oidc.test", "-password", "correct horse oidc")
		raw := admin("token", "-tenant", "oidc-lib", "-email", "olga@oidc.test", "-ttl", "10m")["access_token"].(string)

		tok, err := provider.Verifier(&oidc.Config{ClientID: "motionstudio", SupportedSigningAlgs: []string{oidc.EdDSA}}).Verify(context.Background(), raw)
		Expect(err).NotTo(HaveOccurred())
		Expect(tok.Issuer).To(Equal(p.IdentityURL))
		Expect(tok.Audience).To(ConsistOf("motionstudio"))
		var claims struct {
			TokenUse string `json:"token_use"`
		}
		Expect(tok.Claims(&claims)).To(Succeed())
		Expect(claims.TokenUse).To(Equal("access"))

		_, err = provider.Verifier(&oidc.Config{ClientID: "reports", SupportedSigningAlgs: []string{oidc.EdDSA}}).Verify(context.Background(), raw)
		Expect(err).To(MatchError(ContainSubstring("audience")))
	})

	It("verifies a service token for the audience the client asked for, which the services then refuse", func() {
		verifier := func(aud string) *oidc.IDTokenVerifier {
			return provider.Verifier(&oidc.Config{ClientID: aud, SupportedSigningAlgs: []string{oidc.EdDSA}})
		}
		tok, err := verifier("motionstudio").Verify(context.Background(), grantFor(""))
		Expect(err).NotTo(HaveOccurred())
		Expect(tok.Subject).To(Equal("service:" + p.ClientID))

		reports := grantFor("reports")
		tok, err = verifier("reports").Verify(context.Background(), reports)
		Expect(err).NotTo(HaveOccurred())
		Expect(tok.Audience).To(ConsistOf("reports"))
		_, err = verifier("motionstudio").Verify(context.Background(), reports)
		Expect(err).To(HaveOccurred())

		code, _, _ := call(http.MethodGet, p.ContentURL+"/v1/project-servers", reports, nil)
		Expect(code).To(Equal(http.StatusUnauthorized), "content-svc expects aud motionstudio")
		code, _, _ = call(http.MethodGet, p.AgentteamURL+"/api/orgboard/cartable", reports, nil)
		Expect(code).To(Equal(http.StatusUnauthorized), "agentteam-svc expects aud motionstudio")
	})

	It("refuses a resource the client may not have with invalid_target", func() {
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {p.ClientID}, "client_secret": {p.ClientSecret}, "resource": {"billing"}}
		code, _, body := call(http.MethodPost, p.IdentityURL+"/v1/oauth/token", "", strings.NewReader(form.Encode()),
			"Content-Type", "application/x-www-form-urlencoded")
		Expect(code).To(Equal(http.StatusBadRequest))
		Expect(body).To(ContainSubstring(`"error":"invalid_target"`))
	})
})
