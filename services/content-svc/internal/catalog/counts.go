package catalog

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultCountCacheSize is how many catalog totals a CountCache keeps (some 200 bytes each).
const DefaultCountCacheSize = 10000

// CountCache keeps the catalog's totals per filter set, so that paging through a listing does
// not count the whole catalog on every page. A total is kept only for the catalog version it
// was counted at: Observe with another version (read from the database, which every write that
// can change a total bumps) drops every total, as does a write of this process (Invalidate).
// Totals also expire after the TTL. A CountCache is safe for concurrent use.
type CountCache struct {
	ttl  time.Duration
	size int
	now  func() time.Time

	mu      sync.Mutex
	gen     uint64
	version int64
	entries map[string]countEntry
}

type countEntry struct {
	total int
	at    time.Time
}

// NewCountCache returns a cache keeping at most size totals (DefaultCountCacheSize when size
// is below 1) for ttl each, reading the time from now. A ttl of zero or less disables it.
func NewCountCache(ttl time.Duration, size int, now func() time.Time) *CountCache {
	if size < 1 {
		size = DefaultCountCacheSize
	}
	return &CountCache{ttl: ttl, size: size, now: now, entries: map[string]countEntry{}}
}

// Generation answers the current generation; pass it to Put with a total counted after it.
func (c *CountCache) Generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// Get answers the total kept for key while it is younger than the TTL.
func (c *CountCache) Get(key string) (int, bool) {
	if c.ttl <= 0 {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || c.now().Sub(e.at) >= c.ttl {
		return 0, false
	}
	return e.total, true
}

// Put keeps total for key, unless a write bumped the generation since gen was read (the
// total may then miss that write). When the cache is full, the oldest total makes room.
func (c *CountCache) Put(key string, gen uint64, total int) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	now := c.now()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.size {
		c.evict(now)
	}
	c.entries[key] = countEntry{total: total, at: now}
}

// evict drops the expired totals, or the oldest one when none has expired.
func (c *CountCache) evict(now time.Time) {
	oldest, at := "", now
	for k, e := range c.entries {
		if now.Sub(e.at) >= c.ttl {
			delete(c.entries, k)
			continue
		}
		if !e.at.After(at) {
			oldest, at = k, e.at
		}
	}
	if len(c.entries) >= c.size {
		delete(c.entries, oldest)
	}
}

// Observe drops every total when version differs from the last one seen; call it with the
// catalog's version read before Get and Generation. An older version (read by a request that
// started before a write) drops them too: needless, never stale, since whatever is counted after
// Observe sees at least that write.
func (c *CountCache) Observe(version int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if version == c.version {
		return
	}
	c.version = version
	c.gen++
	clear(c.entries)
}

// Invalidate bumps the generation and drops every total; catalog writes call it.
func (c *CountCache) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}

// countKey names the filter set of q: everything that changes the total, nothing that only
// sorts or pages.
func countKey(q TemplateQuery) string {
	tags := slices.Clone(q.TagIDs)
	slices.Sort(tags)
	premium := "any"
	if q.IsPremium != nil {
		premium = fmt.Sprint(*q.IsPremium)
	}
	return fmt.Sprintf("%q|%q|%q|%q|%q|%s", q.Words, strings.ToLower(q.CategoryID), tags, q.Mode, q.Aspect, premium)
}
