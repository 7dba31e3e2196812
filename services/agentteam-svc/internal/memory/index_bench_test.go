package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
)

// BenchmarkSearch10k ranks a team of 10,000 entries held in memory for a query embedded by the
// local embedder, as GET /api/memory/search does after its database round trips.
func BenchmarkSearch10k(b *testing.B) {
	src := newFakeSource()
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 10_000 {
		src.add("team", fmt.Sprint(i), embed.LocalID, randomUnit(r))
	}
	x := memory.NewIndex(src, memory.IndexLimits{MaxTeams: 10, MaxEntries: 100_000})
	local := embed.NewLocal()
	ctx := context.Background()
	if _, err := x.Search(ctx, "team", embed.LocalID, local.Vector("warm up"), 10); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		q := local.Vector(fmt.Sprint("how do we deploy the billing service ", i))
		if _, err := x.Search(ctx, "team", embed.LocalID, q, 10); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch10kDense ranks the same team for dense queries, as a remote embedder's are
// (every column is read).
func BenchmarkSearch10kDense(b *testing.B) {
	src := newFakeSource()
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 10_000 {
		src.add("team", fmt.Sprint(i), "remote", randomUnit(r))
	}
	x := memory.NewIndex(src, memory.IndexLimits{MaxTeams: 10, MaxEntries: 100_000})
	ctx := context.Background()
	queries := make([][]float32, 64)
	for i := range queries {
		queries[i] = randomUnit(r)
	}
	if _, err := x.Search(ctx, "team", "remote", queries[0], 10); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		if _, err := x.Search(ctx, "team", "remote", queries[i%len(queries)], 10); err != nil {
			b.Fatal(err)
		}
	}
}
