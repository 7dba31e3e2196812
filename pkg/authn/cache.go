package authn

import (
	"slices"
	"time"

	"github.com/motionstudio/platform/pkg/bounded"
)

// Bounds of the verified-token cache.
const (
	// verifiedTTL is how long a verified token is trusted without checking its signature
	// again: a key withdrawn from the JWKS stops its tokens within this time.
	verifiedTTL = time.Minute
	// verifiedMax is how many verified tokens are kept, least recently used out first.
	verifiedMax = 10000
)

// verifiedCache remembers tokens whose signature and claims were verified, so a client that
// sends the same token on every request pays for one Ed25519 verification a minute instead of
// one per request. An entry never outlives its token's expiry. Safe for concurrent use.
type verifiedCache struct {
	m *bounded.Map[string, verifiedEntry]
}

type verifiedEntry struct {
	claims Claims
	until  time.Time
}

func newVerifiedCache() *verifiedCache {
	return &verifiedCache{m: bounded.New(bounded.Options[string, verifiedEntry]{Max: verifiedMax})}
}

// get answers a copy of the claims of raw while its entry is fresh.
func (c *verifiedCache) get(raw string, now time.Time) (*Claims, bool) {
	e, ok := c.m.Get(raw)
	if !ok || !now.Before(e.until) {
		return nil, false
	}
	claims := e.claims
	claims.Scopes = slices.Clone(claims.Scopes)
	return &claims, true
}

// put keeps claims for raw until verifiedTTL from now or the token's expiry, whichever is first.
func (c *verifiedCache) put(raw string, claims *Claims, now time.Time) {
	e := verifiedEntry{claims: *claims, until: now.Add(verifiedTTL)}
	if claims.ExpiresAt.Before(e.until) {
		e.until = claims.ExpiresAt
	}
	e.claims.Scopes = slices.Clone(claims.Scopes)
	c.m.Put(raw, e)
}
