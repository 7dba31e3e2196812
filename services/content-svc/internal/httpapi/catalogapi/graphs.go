package catalogapi

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxGraphBytes bounds the encoded editor graphs a Handler keeps (a 50 × 20 graph is some
// 300 KB); the oldest go first.
const maxGraphBytes = 32 << 20

// graphCache keeps encoded GET /projects/{id}/full answers per project with the editor version
// they were read at. An entry is served only while the version read for the request is the
// same, so a graph is never served stale after a write on any replica, and only while younger
// than maxAge, so the presigned AEP file URL it carries still works for a while. Safe for
// concurrent use.
type graphCache struct {
	mu     sync.Mutex
	items  map[string]graphEntry
	order  []string
	bytes  int
	maxAge time.Duration
}

type graphEntry struct {
	version int64
	body    []byte
	at      time.Time
}

func newGraphCache(maxAge time.Duration) *graphCache {
	return &graphCache{items: map[string]graphEntry{}, maxAge: maxAge}
}

// get answers the body of project's graph at version, when it was encoded less than maxAge ago.
func (g *graphCache) get(project string, version int64) ([]byte, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.items[project]
	if !ok || e.version != version || time.Since(e.at) >= g.maxAge {
		return nil, false
	}
	return e.body, true
}

// put keeps body as project's graph at version, dropping the oldest graphs beyond the bound.
func (g *graphCache) put(project string, version int64, body []byte) {
	if len(body) > maxGraphBytes {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if old, ok := g.items[project]; ok {
		if old.version > version {
			return
		}
		g.bytes -= len(old.body)
	} else {
		g.order = append(g.order, project)
	}
	g.items[project] = graphEntry{version: version, body: body, at: time.Now()}
	g.bytes += len(body)
	for g.bytes > maxGraphBytes && len(g.order) > 0 {
		oldest := g.order[0]
		g.order = g.order[1:]
		g.bytes -= len(g.items[oldest].body)
		delete(g.items, oldest)
	}
}

// graphETag is the entity tag of every graph at version.
func graphETag(version int64) string { return `"v` + strconv.FormatInt(version, 10) + `"` }

// matches reports whether an If-None-Match header names etag (weak or strong) or is "*".
func matches(ifNoneMatch, etag string) bool {
	for _, t := range strings.Split(ifNoneMatch, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
