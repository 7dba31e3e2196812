package catalogapi

import (
	"strconv"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/bounded"
)

// maxGraphBytes bounds the encoded editor graphs a Handler keeps (a 50 × 20 graph is some
// 300 KB); the least recently used go first.
const maxGraphBytes = 32 << 20

// graphCache keeps encoded GET /projects/{id}/full answers per project with the editor version
// they were read at. An entry is served only while the version read for the request is the
// same, so a graph is never served stale after a write on any replica, and only while younger
// than its time to live, so the presigned AEP file URL it carries still works for a while.
type graphCache struct {
	m *bounded.Map[string, graphEntry]
}

type graphEntry struct {
	version int64
	body    []byte
}

func newGraphCache(maxAge time.Duration) *graphCache {
	return &graphCache{m: bounded.New(bounded.Options[string, graphEntry]{
		Max: maxGraphBytes, TTL: maxAge, Size: func(_ string, e graphEntry) int { return len(e.body) },
	})}
}

// get answers the body of project's graph at version.
func (g *graphCache) get(project string, version int64) ([]byte, bool) {
	e, ok := g.m.Get(project)
	return e.body, ok && e.version == version
}

// put keeps body as project's graph at version.
func (g *graphCache) put(project string, version int64, body []byte) {
	g.m.Put(project, graphEntry{version: version, body: body})
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
