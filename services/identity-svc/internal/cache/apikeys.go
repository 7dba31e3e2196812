package cache

import (
	"context"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/bounded"
	"github.com/motionstudio/platform/services/identity-svc/internal/apikey"
)

// Keys is an apikey.Store whose ByHash answers from memory, for the validation hot path: a key
// for the TTL, an unknown hash for the shorter negative TTL. Its Revoke drops the key when it
// returns, and Forget drops a key another replica revoked (the revoked event's consumer calls
// it). Safe for concurrent use.
type Keys struct {
	apikey.Store
	byHash      *bounded.Map[string, heldKey]
	negativeTTL time.Duration
}

// heldKey is a key read by hash, or the NotFound error of an unknown hash.
type heldKey struct {
	key *apikey.Key
	err error
}

// NewKeys returns Keys over s holding at most max hashes.
func NewKeys(s apikey.Store, ttl, negativeTTL time.Duration, max int, now func() time.Time) *Keys {
	return &Keys{Store: s, negativeTTL: negativeTTL, byHash: bounded.New(bounded.Options[string, heldKey]{Max: max, TTL: ttl, Now: now})}
}

// ByHash returns the key with hash (apikey.Store); the key is shared and must not be written.
func (k *Keys) ByHash(ctx context.Context, hash string) (*apikey.Key, error) {
	if held, ok := k.byHash.Get(hash); ok {
		return held.key, held.err
	}
	t := k.byHash.Ticket()
	key, err := k.Store.ByHash(ctx, hash)
	switch {
	case err == nil:
		k.byHash.Keep(t, hash, heldKey{key: key})
	case apperr.Is(err, apperr.NotFound):
		k.byHash.KeepFor(t, hash, heldKey{err: err}, k.negativeTTL)
	}
	return key, err
}

// Revoke deactivates the key (apikey.Store) and drops it from memory.
func (k *Keys) Revoke(ctx context.Context, key *apikey.Key, r apikey.Revocation) (bool, error) {
	defer k.Forget(key.ID)
	return k.Store.Revoke(ctx, key, r)
}

// Forget drops the key with id.
func (k *Keys) Forget(id string) {
	k.byHash.DeleteFunc(func(_ string, held heldKey) bool { return held.key != nil && held.key.ID == id })
}

// ForgetTenant drops every key of the tenant, so that the next validation reads the tenant's
// status (its status changed here or, through the event, on another replica).
func (k *Keys) ForgetTenant(tenantID string) {
	k.byHash.DeleteFunc(func(_ string, held heldKey) bool { return held.key != nil && held.key.TenantID == tenantID })
}
