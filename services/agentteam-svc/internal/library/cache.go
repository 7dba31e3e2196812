package library

import "sync"

// listCacheSize bounds the lists a Service keeps; when full it starts over.
const listCacheSize = 2048

// listKey is one page of one list.
type listKey struct {
	q Query
	p Page
}

// listCache keeps pages of lists with the stamp of the library state they were read at, so a
// page is served from memory until the library changes (on any replica). Cached items are
// shared: callers only read them.
type listCache struct {
	mu      sync.Mutex
	max     int
	entries map[listKey]listEntry
}

type listEntry struct {
	stamp string
	items []Item
}

func newListCache(max int) *listCache {
	return &listCache{max: max, entries: make(map[listKey]listEntry)}
}

func (c *listCache) get(k listKey, stamp string) ([]Item, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	return e.items, ok && e.stamp == stamp
}

func (c *listCache) put(k listKey, stamp string, items []Item) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		c.entries = make(map[listKey]listEntry)
	}
	c.entries[k] = listEntry{stamp: stamp, items: items}
}
