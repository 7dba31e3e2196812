package testkit

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/authn"
)

// tokenLifetime is the validity of the tokens made by UserToken and ServiceToken.
const tokenLifetime = 15 * time.Minute

// Issuer stands in for identity-svc in tests: it signs tokens with a fresh Ed25519 key and
// serves the public keys at /.well-known/jwks.json on 127.0.0.1.
type Issuer struct {
	name string
	srv  *httptest.Server

	mu     sync.Mutex
	signer *authn.Signer
	keys   []jwk.Key
}

// NewIssuer starts an issuer with one key; its server is closed when the spec or suite ends.
func NewIssuer() *Issuer {
	iss := &Issuer{name: "https://identity.test/" + Scope("issuer")}
	iss.Rotate()
	iss.srv = httptest.NewServer(http.HandlerFunc(iss.serveJWKS))
	ginkgo.DeferCleanup(iss.srv.Close)
	return iss
}

// Rotate switches signing to a fresh key with a new kid; the JWKS then lists the old keys and
// the new one, as identity-svc does during a key rotation.
func (i *Issuer) Rotate() {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	signer, err := authn.NewSigner(priv, uuid.NewString(), i.name)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	pub, ok := signer.PublicSet().Key(0)
	gomega.Expect(ok).To(gomega.BeTrue())
	i.mu.Lock()
	defer i.mu.Unlock()
	i.signer = signer
	i.keys = append(i.keys, pub)
}

// Withdraw removes the key kid from the JWKS, as identity-svc does once every token of a retired
// key has expired.
func (i *Issuer) Withdraw(kid string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.keys = slices.DeleteFunc(i.keys, func(k jwk.Key) bool { return k.KeyID() == kid })
}

func (i *Issuer) serveJWKS(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/.well-known/jwks.json" {
		http.NotFound(w, r)
		return
	}
	i.mu.Lock()
	set := jwk.NewSet()
	for _, k := range i.keys {
		_ = set.AddKey(k)
	}
	i.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(set)
}

// JWKSURL is the URL of the issuer's key set.
func (i *Issuer) JWKSURL() string { return i.srv.URL + "/.well-known/jwks.json" }

// IssuerName is the iss of the issuer's tokens.
func (i *Issuer) IssuerName() string { return i.name }

// Signer is the signer of the current key.
func (i *Issuer) Signer() *authn.Signer {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.signer
}

// UserToken is a valid access token for the user in the tenant.
func (i *Issuer) UserToken(userID, tenantID string, admin bool) string {
	return i.Token(authn.Claims{
		Subject:   userID,
		TenantID:  tenantID,
		SessionID: uuid.NewString(),
		Admin:     admin,
		TokenUse:  authn.TokenUseAccess,
		ExpiresAt: time.Now().Add(tokenLifetime),
	})
}

// ServiceToken is a valid service token for the named client.
func (i *Issuer) ServiceToken(client string) string {
	return i.Token(authn.Claims{
		Subject:   client,
		TokenUse:  authn.TokenUseService,
		ExpiresAt: time.Now().Add(tokenLifetime),
	})
}

// Token signs c as given (expired, another issuer, ...) with the current key; an empty audience
// becomes authn.DefaultAudience, the one the services expect by default.
func (i *Issuer) Token(c authn.Claims) string {
	if c.Audience == nil {
		c.Audience = []string{authn.DefaultAudience}
	}
	raw, err := i.Signer().Sign(c)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return raw
}
