package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
)

// fakeSource is an in-memory memory.IndexSource that logs every change with its version.
type fakeSource struct {
	mu      sync.Mutex
	version map[string]int64
	log     map[string][]change
	deltas  int
}

type change struct {
	version int64
	vector  memory.Vector
	deleted bool
}

func newFakeSource() *fakeSource {
	return &fakeSource{version: map[string]int64{}, log: map[string][]change{}}
}

func (f *fakeSource) add(team, id, embedder string, v []float32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version[team]++
	f.log[team] = append(f.log[team], change{version: f.version[team], vector: memory.Vector{EntryID: id, Embedder: embedder, Values: v}})
}

func (f *fakeSource) remove(team, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version[team]++
	f.log[team] = append(f.log[team], change{version: f.version[team], vector: memory.Vector{EntryID: id}, deleted: true})
}

func (f *fakeSource) IndexVersion(_ context.Context, team string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.version[team], nil
}

func (f *fakeSource) IndexDelta(_ context.Context, team, embedder string, since int64) (memory.Delta, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deltas++
	d := memory.Delta{Version: f.version[team]}
	deleted := map[string]bool{}
	for _, c := range f.log[team] {
		if c.deleted {
			deleted[c.vector.EntryID] = true
		}
	}
	for _, c := range f.log[team] {
		switch {
		case c.version <= since:
		case c.deleted:
			d.Deletes = append(d.Deletes, c.vector.EntryID)
		case !deleted[c.vector.EntryID] && c.vector.Embedder == embedder:
			d.Upserts = append(d.Upserts, c.vector)
		}
	}
	return d, nil
}

// axis is the unit vector along dimension i, tilted towards dimension j by t.
func axis(i, j int, t float32) []float32 {
	v := make([]float32, embed.Dimensions)
	v[i], v[j] = 1, t
	embed.Normalize(v)
	return v
}

func randomUnit(r *rand.Rand) []float32 {
	v := make([]float32, embed.Dimensions)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	embed.Normalize(v)
	return v
}

func ids(scored []memory.Scored) []string {
	out := make([]string, len(scored))
	for i, s := range scored {
		out[i] = s.EntryID
	}
	return out
}

var limits = memory.IndexLimits{MaxTeams: 10, MaxEntries: 100_000}

var _ = Describe("the in-memory vector index", func() {
	var src *fakeSource

	BeforeEach(func() { src = newFakeSource() })

	It("ranks a team's entries by cosine similarity, best first", func(ctx SpecContext) {
		src.add("t1", "exact", "e1", axis(0, 1, 0))
		src.add("t1", "close", "e1", axis(0, 1, 0.5))
		src.add("t1", "far", "e1", axis(0, 1, 3))
		src.add("t1", "orthogonal", "e1", axis(5, 6, 0))
		src.add("t2", "other team", "e1", axis(0, 1, 0))
		x := memory.NewIndex(src, limits)

		hits, err := x.Search(ctx, "t1", "e1", axis(0, 1, 0), 3)
		Expect(err).NotTo(HaveOccurred())
		Expect(ids(hits)).To(Equal([]string{"exact", "close", "far"}))
		Expect(hits[0].Score).To(BeNumerically("~", 1, 1e-6))
		Expect(hits[1].Score).To(BeNumerically("~", 1/float32(1.118034), 1e-4))
	})

	It("never ranks vectors of another embedder", func(ctx SpecContext) {
		src.add("t1", "mine", "e1", axis(0, 1, 1))
		src.add("t1", "theirs", "e2", axis(0, 1, 0))
		hits, err := memory.NewIndex(src, limits).Search(ctx, "t1", "e1", axis(0, 1, 0), 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(ids(hits)).To(Equal([]string{"mine"}))
	})

	It("sees inserts and deletes made after it loaded the team, reading only the delta", func(ctx SpecContext) {
		src.add("t1", "a", "e1", axis(0, 1, 0))
		src.add("t1", "b", "e1", axis(0, 1, 1))
		x := memory.NewIndex(src, limits)
		Expect(x.Search(ctx, "t1", "e1", axis(0, 1, 0), 10)).To(HaveLen(2))

		src.remove("t1", "a")
		src.add("t1", "c", "e1", axis(0, 1, 0.1))
		hits, err := x.Search(ctx, "t1", "e1", axis(0, 1, 0), 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(ids(hits)).To(Equal([]string{"c", "b"}))
		Expect(src.deltas).To(Equal(2))

		Expect(x.Search(ctx, "t1", "e1", axis(0, 1, 0), 10)).To(HaveLen(2))
		Expect(src.deltas).To(Equal(2), "an unchanged team is not read again")
	})

	It("applies a change notice to a held team before the next search", func(ctx SpecContext) {
		src.add("t1", "a", "e1", axis(0, 1, 0))
		x := memory.NewIndex(src, limits)
		Expect(x.Search(ctx, "t1", "e1", axis(0, 1, 0), 10)).To(HaveLen(1))
		src.add("t1", "b", "e1", axis(0, 1, 0))
		Expect(x.Refresh(ctx, "t1", 2)).To(Succeed())
		Expect(src.deltas).To(Equal(2))
		Expect(x.Search(ctx, "t1", "e1", axis(0, 1, 0), 10)).To(HaveLen(2))
		Expect(src.deltas).To(Equal(2))
		Expect(x.Refresh(ctx, "unheld", 7)).To(Succeed())
		Expect(src.deltas).To(Equal(2), "a team nobody searched is not loaded by a notice")
	})

	It("holds at most MaxTeams teams, evicting the least recently searched", func(ctx SpecContext) {
		x := memory.NewIndex(src, memory.IndexLimits{MaxTeams: 2, MaxEntries: 100})
		for _, t := range []string{"t1", "t2", "t3"} {
			src.add(t, t+"-a", "e1", axis(0, 1, 0))
			Expect(x.Search(ctx, t, "e1", axis(0, 1, 0), 1)).To(HaveLen(1))
		}
		teams, vectors := x.Held()
		Expect(teams).To(Equal(2))
		Expect(vectors).To(Equal(2))
	})

	It("ranks a team larger than MaxEntries without holding it", func(ctx SpecContext) {
		for i := range 5 {
			src.add("big", fmt.Sprint("e", i), "e1", axis(0, 1, float32(i)))
		}
		x := memory.NewIndex(src, memory.IndexLimits{MaxTeams: 2, MaxEntries: 3})
		hits, err := x.Search(ctx, "big", "e1", axis(0, 1, 0), 2)
		Expect(err).NotTo(HaveOccurred())
		Expect(ids(hits)).To(Equal([]string{"e0", "e1"}))
		teams, vectors := x.Held()
		Expect(teams).To(BeZero())
		Expect(vectors).To(BeZero())
	})

	It("stays consistent while many searches, notices and evictions race", func(ctx SpecContext) {
		for t := range 6 {
			for i := range 20 {
				src.add(fmt.Sprint("t", t), fmt.Sprint(t, "-", i), "e1", axis(i%7, 8, 0.5))
			}
		}
		x := memory.NewIndex(src, memory.IndexLimits{MaxTeams: 3, MaxEntries: 50})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for i := range 200 {
					team := fmt.Sprint("t", (g+i)%6)
					hits, err := x.Search(ctx, team, "e1", axis(0, 8, 0.5), 5)
					Expect(err).NotTo(HaveOccurred())
					Expect(hits).To(HaveLen(5))
					Expect(x.Refresh(ctx, team, int64(i))).To(Succeed())
				}
			}()
		}
		wg.Wait()
		teams, vectors := x.Held()
		Expect(teams).To(BeNumerically("<=", 3))
		Expect(vectors).To(BeNumerically("<=", 50))
		Expect(vectors).To(Equal(teams * 20))
	})

	It("finds the true nearest neighbours among 10,000 random vectors", func(ctx SpecContext) {
		r := rand.New(rand.NewPCG(1, 2))
		vecs := make([][]float32, 10_000)
		for i := range vecs {
			vecs[i] = randomUnit(r)
			src.add("t1", fmt.Sprintf("%05d", i), "e1", vecs[i])
		}
		q := randomUnit(r)
		best, bestScore := "", float32(-2)
		for i, v := range vecs {
			if s := embed.Dot(q, v); s > bestScore {
				best, bestScore = fmt.Sprintf("%05d", i), s
			}
		}
		hits, err := memory.NewIndex(src, limits).Search(ctx, "t1", "e1", q, 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(hits).To(HaveLen(10))
		Expect(hits[0].EntryID).To(Equal(best))
		for i := 1; i < len(hits); i++ {
			Expect(hits[i].Score).To(BeNumerically("<=", hits[i-1].Score))
		}
	})
})
