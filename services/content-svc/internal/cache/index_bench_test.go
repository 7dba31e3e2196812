package cache

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/pkg/pglisten"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// BenchmarkSearchMillion measures the index's CPU for a relevance page of one or two search
// words over a million templates, with lexemes stored as bitmaps and as lists (go test -bench
// SearchMillion ./services/content-svc/internal/cache/); the HTTP-level numbers are make bench-1m's.
func BenchmarkSearchMillion(b *testing.B) {
	const n = 1_000_000
	r := rand.New(rand.NewPCG(1, 2)) // #nosec G404 -- test data
	rows := make(rowsLister, n)
	for i := range rows {
		rows[i] = catalog.ListingRow{ID: uuid.NewString(), PrimaryMode: "video", Places: [4]int{i + 1, i + 1, i + 1, i + 1}}
	}
	lexemes := randomLexemes(r, n, []lexemeShare{
		{"al", 0.01}, {"alp", 0.04}, {"alpha", 0.3}, {"alpine", 0.12}, {"alps", 0.02}, {"bet", 0.05},
		{"beta", 0.01}, {"gam", 0.2}, {"gamma", 0.3}, {"gamut", 0.002}, {"wed", 0.001}, {"wedding", 0.003},
	})
	ix, err := buildIndex(context.Background(), searchLister{rows, lexemes}, pglisten.Ticket{}, n, IndexOptions{MaxTemplates: n})
	if err != nil {
		b.Fatal(err)
	}
	queries := [][]string{{"alpha"}, {"gam", "alp"}, {"wed"}, {"wedding", "beta"}, {"g"}, {"alpine", "gamma"}}
	i := 0
	for b.Loop() {
		m, _ := ix.compile(catalog.TemplateQuery{Words: queries[i%len(queries)]})
		m.page(catalog.SortRelevance, 0, 21)
		m.release()
		i++
	}
}
