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

// teamVectors is one team's vectors of one embedder, stored by dimension: cols[d][i] is
// component d of entry i. A query then reads only the columns where it is non-zero (a local
// embedder's query has a few dozen), and each read is one contiguous pass.
type teamVectors struct {
	key string
	// counted is how many of its vectors Index.held includes; guarded by Index.mu.
	counted int

	mu      sync.RWMutex
	loaded  bool
	version int64
	ids     []string
	pos     map[string]int
	cols    [embed.Dimensions][]float32
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
			for c := range t.cols {
				t.cols[c][i] = t.cols[c][last]
			}
			t.pos[t.ids[i]] = i
		}
		t.ids = t.ids[:last]
		for c := range t.cols {
			t.cols[c] = t.cols[c][:last]
		}
		delete(t.pos, id)
	}
	for _, v := range d.Upserts {
		if len(v.Values) != embed.Dimensions {
			continue
		}
		if i, ok := t.pos[v.EntryID]; ok {
			for c, x := range v.Values {
				t.cols[c][i] = x
			}
			continue
		}
		t.pos[v.EntryID] = len(t.ids)
		t.ids = append(t.ids, v.EntryID)
		for c, x := range v.Values {
			t.cols[c] = append(t.cols[c], x)
		}
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
	out := rank(t.ids, &t.cols, q, k)
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

// rank scores every vector against q, one non-zero query component at a time, and keeps the k
// best, best first (ties by id).
func rank(ids []string, cols *[embed.Dimensions][]float32, q []float32, k int) []Scored {
	if k <= 0 || len(q) != embed.Dimensions || len(ids) == 0 {
		return nil
	}
	scores := make([]float32, len(ids))
	nz := make([]int, 0, embed.Dimensions)
	for c, qc := range q {
		if qc != 0 {
			nz = append(nz, c)
		}
	}
	for ; len(nz) >= 4; nz = nz[4:] {
		a, b, c, d := nz[0], nz[1], nz[2], nz[3]
		addScaled4(scores, cols[a], cols[b], cols[c], cols[d], q[a], q[b], q[c], q[d])
	}
	for _, c := range nz {
		addScaled(scores, cols[c], q[c])
	}
	h := make(minHeap, 0, k+1)
	for i, s := range scores {
		if len(h) < k {
			heap.Push(&h, Scored{ids[i], s})
		} else if s >= h[0].Score && better(Scored{ids[i], s}, h[0]) {
			h[0] = Scored{ids[i], s}
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

// addScaled adds a*x to dst; len(x) must be at least len(dst).
func addScaled(dst, x []float32, a float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] += a * x[i]
	}
}

// addScaled4 adds a*x + b*y + c*z + d*w to dst in one pass, so dst is read and written once
// per four columns.
func addScaled4(dst, x, y, z, w []float32, a, b, c, d float32) {
	n := len(dst)
	x, y, z, w = x[:n], y[:n], z[:n], w[:n]
	for i := range dst {
		dst[i] += a*x[i] + b*y[i] + c*z[i] + d*w[i]
	}
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
