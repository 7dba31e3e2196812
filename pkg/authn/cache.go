package authn

import (
	"slices"
	"sync"
	"time"
)

// Bounds of the verified-token cache.
const (
	// verifiedTTL is how long a verified token is trusted without checking its signature
	// again: a key withdrawn from the JWKS stops its tokens within this time.
	verifiedTTL = time.Minute
	// verifiedMax is how many verified tokens are kept; a full cache starts over.
	verifiedMax = 10000
)

// verifiedCache remembers tokens whose signature and claims were verified, so a client that
// sends the same token on every request pays for one Ed25519 verification a minute instead of
// one per request. An entry never outlives its token's expiry. Safe for concurrent use.
type verifiedCache struct {
	mu      sync.Mutex
	entries map[string]verifiedEntry
}

type verifiedEntry struct {
	claims Claims
	until  time.Time
}

func newVerifiedCache() *verifiedCache {
	return &verifiedCache{entries: map[string]verifiedEntry{}}
}

// get answers a copy of the claims of raw while its entry is fresh.
func (c *verifiedCache) get(raw string, now time.Time) (*Claims, bool) {
	c.mu.Lock()
	e, ok := c.entries[raw]
	c.mu.Unlock()
	if !ok || !now.Before(e.until) {
		return nil, false
	}
	claims := e.claims
	claims.Scopes = slices.Clone(claims.Scopes)
	return &claims, true
}

// put keeps claims for raw until verifiedTTL from now or the token's expiry, whichever is first.
func (c *verifiedCache) put(raw string, claims *Claims, now time.Time) {
	until := now.Add(verifiedTTL)
	if claims.ExpiresAt.Before(until) {
		until = claims.ExpiresAt
	}
	e := verifiedEntry{claims: *claims, until: until}
	e.claims.Scopes = slices.Clone(claims.Scopes)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= verifiedMax {
		clear(c.entries)
	}
	c.entries[raw] = e
}
