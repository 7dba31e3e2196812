package apikey

import (
	"context"
	"crypto/subtle"
	"sync"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Cache keeps keys by hash in memory for the validation hot path. Entries live for a short
// TTL; unknown hashes are remembered more briefly. Forget drops a key at once, and is called on
// revocation both by the revoking process and, through the revoked event, by every other one;
// ForgetTenant drops a tenant's keys when its status changes, in the same ways.
type Cache struct {
	ttl, negativeTTL time.Duration
	max              int
	now              func() time.Time

	mu     sync.Mutex
	byHash map[string]cacheEntry
	byID   map[string]string
}

type cacheEntry struct {
	key     *Key
	expires time.Time
}

// NewCache returns a Cache holding at most max entries.
func NewCache(ttl, negativeTTL time.Duration, max int, now func() time.Time) *Cache {
	return &Cache{ttl: ttl, negativeTTL: negativeTTL, max: max, now: now, byHash: map[string]cacheEntry{}, byID: map[string]string{}}
}

// Get answers the key with hash from the cache or from load, which returns apperr NotFound for
// an unknown hash; that answer is cached too. Other load errors are returned and not cached.
func (c *Cache) Get(ctx context.Context, hash string, load func(ctx context.Context, hash string) (*Key, error)) (*Key, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.byHash[hash]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		if e.key == nil {
			return nil, apperr.E(apperr.NotFound, "not_found", "API key not found")
		}
		return e.key, nil
	}
	k, err := load(ctx, hash)
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byHash) >= c.max {
		c.byHash, c.byID = map[string]cacheEntry{}, map[string]string{}
	}
	if err != nil {
		c.byHash[hash] = cacheEntry{expires: now.Add(c.negativeTTL)}
		return nil, err
	}
	c.byHash[hash] = cacheEntry{key: k, expires: now.Add(c.ttl)}
	c.byID[k.ID] = hash
	return k, nil
}

// Forget drops the key with id.
func (c *Cache) Forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.byID[id]; ok {
		delete(c.byHash, h)
		delete(c.byID, id)
	}
}

// ForgetTenant drops every key of the tenant (a status change). It walks the cache, which a
// status change, rare, can afford.
func (c *Cache) ForgetTenant(tenantID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, e := range c.byHash {
		if e.key != nil && e.key.TenantID == tenantID {
			delete(c.byHash, h)
			delete(c.byID, e.key.ID)
		}
	}
}

func equalConstantTime(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
