package memory

import (
	"container/heap"
	"container/list"
	"context"
	"sync"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
)

// Vector is an entry's embedding, made by the embedder Embedder names.
type Vector struct {
	EntryID  string
	Embedder string
	Values   []float32
}

// Delta is what changed in a team's memory after a version: the entries added (with their
// vectors of the asked embedder) and the entries deleted. A full load is the delta after
// version 0.
type Delta struct {
	Version int64
	Upserts []Vector
	Deletes []string
}

// IndexSource is where the index reads the truth: each team's memory version, bumped by every
// insert and delete, and the changes after a version.
type IndexSource interface {
	// IndexVersion returns the team's current memory version (0 for a team without entries).
	IndexVersion(ctx context.Context, teamID string) (int64, error)
	// IndexDelta returns the changes after since, with vectors of the embedder only; entries
	// of other embedders are left out.
	IndexDelta(ctx context.Context, teamID, embedder string, since int64) (Delta, error)
}

// Scored is an entry id with its cosine similarity to a query.
type Scored struct {
	EntryID string
	Score   float32
}

// IndexLimits bound what the index holds in memory.
type IndexLimits struct {
	// MaxTeams is how many teams are held at once, least recently used evicted first.
	MaxTeams int
	// MaxEntries is how many vectors are held across teams; a team larger than this alone is
	// ranked straight from the source on every search, never held.
	MaxEntries int
}

// Index holds each team's normalised vectors in memory so a search ranks 10,000 entries in a
// few milliseconds. Before every search it compares the team's version with the source and
// applies the delta when it is behind, so it never answers from stale data; Refresh lets other
// replicas' change notices bring a held team up to date before anyone asks. Safe for concurrent
// use.
type Index struct {
	src    IndexSource
	limits IndexLimits

	mu    sync.Mutex
	teams map[string]*list.Element // of *teamVectors, keyed by team and embedder
	lru   *list.List               // front = most recently used
	held  int                      // vectors held across teams
}

// NewIndex returns an empty Index over src.
func NewIndex(src IndexSource, limits IndexLimits) *Index {
	return &Index{src: src, limits: limits, teams: map[string]*list.Element{}, lru: list.New()}
}

// teamVectors is one team's vectors of one embedder, stored flat (n x Dimensions).
type teamVectors struct {
	key string
	// counted is how many of its vectors Index.held includes; guarded by Index.mu.
	counted int

	mu      sync.RWMutex
	loaded  bool
	version int64
	ids     []string
	pos     map[string]int
	vecs    []float32
}

func (t *teamVectors) apply(d Delta) {
	for _, id := range d.Deletes {
		i, ok := t.pos[id]
		if !ok {
			continue
		}
		last := len(t.ids) - 1
		if i != last {
			t.ids[i] = t.ids[last]
			copy(t.vecs[i*embed.Dimensions:(i+1)*embed.Dimensions], t.vecs[last*embed.Dimensions:])
			t.pos[t.ids[i]] = i
		}
		t.ids = t.ids[:last]
		t.vecs = t.vecs[:last*embed.Dimensions]
		delete(t.pos, id)
	}
	for _, v := range d.Upserts {
		if len(v.Values) != embed.Dimensions {
			continue
		}
		if i, ok := t.pos[v.EntryID]; ok {
			copy(t.vecs[i*embed.Dimensions:], v.Values)
			continue
		}
		t.pos[v.EntryID] = len(t.ids)
		t.ids = append(t.ids, v.EntryID)
		t.vecs = append(t.vecs, v.Values...)
	}
	if d.Version > t.version {
		t.version = d.Version
	}
	t.loaded = true
}

// Search returns the k entries of the team most similar to q (a normalised vector of the
// embedder), best first. Errors are the source's.
func (x *Index) Search(ctx context.Context, teamID, embedder string, q []float32, k int) ([]Scored, error) {
	version, err := x.src.IndexVersion(ctx, teamID)
	if err != nil {
		return nil, err
	}
	t := x.team(teamID + "|" + embedder)
	if err := x.bringUpTo(ctx, t, teamID, embedder, version); err != nil {
		return nil, err
	}
	t.mu.RLock()
	n := len(t.ids)
	out := rank(t.ids, t.vecs, q, k)
	t.mu.RUnlock()
	if n > x.limits.MaxEntries {
		x.drop(t.key)
	}
	x.evict(t.key)
	return out, nil
}

// Refresh brings the team's held vectors up to version when the index holds them; it does
// nothing for a team it does not hold (the first search loads it).
func (x *Index) Refresh(ctx context.Context, teamID string, version int64) error {
	x.mu.Lock()
	var held []*teamVectors
	for _, el := range x.teams {
		t := el.Value.(*teamVectors)
		if len(t.key) > len(teamID) && t.key[:len(teamID)] == teamID && t.key[len(teamID)] == '|' {
			held = append(held, t)
		}
	}
	x.mu.Unlock()
	for _, t := range held {
		if err := x.bringUpTo(ctx, t, teamID, t.key[len(teamID)+1:], version); err != nil {
			return err
		}
	}
	x.evict("")
	return nil
}

// bringUpTo applies the source's delta when t is behind version; one caller loads while the
// others wait for it.
func (x *Index) bringUpTo(ctx context.Context, t *teamVectors, teamID, embedder string, version int64) error {
	t.mu.RLock()
	fresh := t.loaded && t.version >= version
	t.mu.RUnlock()
	if fresh {
		return nil
	}
	n, err := t.load(ctx, x.src, teamID, embedder, version)
	if err != nil {
		return err
	}
	// t.mu is released before x.mu is taken: evict holds x.mu and never waits for a team.
	x.mu.Lock()
	if el, ok := x.teams[t.key]; ok && el.Value == t {
		x.held += n - t.counted
		t.counted = n
	}
	x.mu.Unlock()
	return nil
}

// load applies the source's delta under t's write lock, unless another caller brought t up to
// version meanwhile, and returns how many vectors t holds.
func (t *teamVectors) load(ctx context.Context, src IndexSource, teamID, embedder string, version int64) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.loaded && t.version >= version {
		return len(t.ids), nil
	}
	d, err := src.IndexDelta(ctx, teamID, embedder, t.version)
	if err != nil {
		return 0, err
	}
	t.apply(d)
	return len(t.ids), nil
}

// team returns the held vectors of key, creating an empty holder, and marks it used.
func (x *Index) team(key string) *teamVectors {
	x.mu.Lock()
	defer x.mu.Unlock()
	if el, ok := x.teams[key]; ok {
		x.lru.MoveToFront(el)
		return el.Value.(*teamVectors)
	}
	t := &teamVectors{key: key, pos: map[string]int{}}
	x.teams[key] = x.lru.PushFront(t)
	return t
}

// drop forgets key.
func (x *Index) drop(key string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.remove(key)
}

func (x *Index) remove(key string) {
	el, ok := x.teams[key]
	if !ok {
		return
	}
	x.held -= el.Value.(*teamVectors).counted
	x.lru.Remove(el)
	delete(x.teams, key)
}

// evict forgets the least recently used teams, never keep, until the limits hold.
func (x *Index) evict(keep string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for el := x.lru.Back(); el != nil && (x.lru.Len() > x.limits.MaxTeams || x.held > x.limits.MaxEntries); {
		prev := el.Prev()
		if t := el.Value.(*teamVectors); t.key != keep {
			x.remove(t.key)
		}
		el = prev
	}
}

// Held reports how many teams and vectors the index holds.
func (x *Index) Held() (teams, vectors int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.lru.Len(), x.held
}

// rank scores every vector against q and keeps the k best, best first (ties by id).
func rank(ids []string, vecs []float32, q []float32, k int) []Scored {
	if k <= 0 || len(q) != embed.Dimensions {
		return nil
	}
	h := make(minHeap, 0, k+1)
	for i, id := range ids {
		s := dot384(q, vecs[i*embed.Dimensions:(i+1)*embed.Dimensions])
		if len(h) < k {
			heap.Push(&h, Scored{id, s})
		} else if better(Scored{id, s}, h[0]) {
			h[0] = Scored{id, s}
			heap.Fix(&h, 0)
		}
	}
	out := make([]Scored, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(Scored)
	}
	return out
}

// better orders hits: higher score first, then the smaller id, so ranking is deterministic.
func better(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.EntryID < b.EntryID
}

// dot384 is embed.Dot unrolled by eight for the ranking loop.
func dot384(a, b []float32) float32 {
	a, b = a[:embed.Dimensions], b[:embed.Dimensions]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for i := 0; i < embed.Dimensions; i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// minHeap keeps the worst of the best k at its root.
type minHeap []Scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(v any)        { *h = append(*h, v.(Scored)) }
func (h *minHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}
