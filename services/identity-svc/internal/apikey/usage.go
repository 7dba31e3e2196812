package apikey

import (
	"context"
	"sync"
	"time"
)

// Counter accumulates key usage in memory so that validation never writes to the database;
// Flush hands the totals to the store periodically.
type Counter struct {
	mu      sync.Mutex
	pending map[string]*Usage
}

// NewCounter returns an empty Counter.
func NewCounter() *Counter { return &Counter{pending: map[string]*Usage{}} }

// Add counts one use of the key at t.
func (c *Counter) Add(keyID, tenantID string, t time.Time) {
	c.merge(Usage{KeyID: keyID, TenantID: tenantID, Count: 1, LastUsedAt: t})
}

func (c *Counter) merge(in Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.pending[in.KeyID]
	if !ok {
		u = &Usage{KeyID: in.KeyID, TenantID: in.TenantID}
		c.pending[in.KeyID] = u
	}
	u.Count += in.Count
	if in.LastUsedAt.After(u.LastUsedAt) {
		u.LastUsedAt = in.LastUsedAt
	}
}

// Overlay adds this process's unflushed use to k, so a list right after use shows it.
func (c *Counter) Overlay(k *Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u, ok := c.pending[k.ID]; ok {
		k.UsageCount += u.Count
		if k.LastUsedAt == nil || u.LastUsedAt.After(*k.LastUsedAt) {
			t := u.LastUsedAt
			k.LastUsedAt = &t
		}
	}
}

// Flush writes the accumulated use through store. On failure the use is kept for the next
// flush, so counts are not lost while the database is away.
func (c *Counter) Flush(ctx context.Context, store Store) error {
	c.mu.Lock()
	batch := make([]Usage, 0, len(c.pending))
	for _, u := range c.pending {
		batch = append(batch, *u)
	}
	c.pending = map[string]*Usage{}
	c.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := store.AddUsage(ctx, batch); err != nil {
		for _, u := range batch {
			c.merge(u)
		}
		return err
	}
	return nil
}
