package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// syntheticRow is template i of a synthetic catalog: random sort keys, a few of twelve
// lexemes of varied shares, filters of varied shares.
func syntheticRow(r *rand.Rand, id string) catalog.ListingRow {
	words := []string{"al", "alp", "alpha", "alpine", "alps", "bet", "beta", "gam", "gamma", "gamut", "wed", "wedding"}
	row := catalog.ListingRow{ID: id, Live: true, CreatedAt: time.UnixMicro(r.Int64N(1 << 50)), Card: catalog.TemplateCard{
		ContainerID: id, IsPremium: r.IntN(40) == 0, PrimaryMode: "video", UseCount: r.Int64N(1000), RateAvg: float64(r.IntN(11)) / 2,
		Name: fmt.Sprintf("%s %d", words[r.IntN(len(words))], r.IntN(1000)), AvailableAspects: []string{"16:9"}}}
	for range 1 + r.IntN(4) {
		row.Lexemes = append(row.Lexemes, catalog.ListingLexeme{Text: words[r.IntN(len(words))] + fmt.Sprint(r.IntN(50)), Weight: uint8(r.IntN(4))}) // #nosec G115 -- below 4
	}
	if r.IntN(3) == 0 {
		row.TagIDs = []string{"t1"}
	}
	return row
}

// benchmarkApply measures applying one changed template (new keys, words and filters) to an
// index of n templates (go test -run XXX -bench Apply ./services/content-svc/internal/cache/).
func benchmarkApply(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(1, 2)) // #nosec G404 -- test data
	ix := newIndex()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uuid.NewString()
		if err := ix.apply(syntheticRow(r, ids[i])); err != nil {
			b.Fatal(err)
		}
	}
	ix.finish()
	for b.Loop() {
		if err := ix.apply(syntheticRow(r, ids[r.IntN(n)])); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkEnterLeave measures a template leaving an index of n templates and another
// entering it: each shifts the four orders (go test -run XXX -bench EnterLeave).
func benchmarkEnterLeave(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(3, 4)) // #nosec G404 -- test data
	ix := newIndex()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uuid.NewString()
		if err := ix.apply(syntheticRow(r, ids[i])); err != nil {
			b.Fatal(err)
		}
	}
	ix.finish()
	for b.Loop() {
		i := r.IntN(n)
		if err := ix.apply(catalog.ListingRow{ID: ids[i]}); err != nil {
			b.Fatal(err)
		}
		ids[i] = uuid.NewString()
		if err := ix.apply(syntheticRow(r, ids[i])); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkUseCounted measures making one template after another the most used in an index of
// n templates, as the bench's writer does: every change moves a template to the front of the
// popular order, where the labels run out first.
func benchmarkUseCounted(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(5, 6)) // #nosec G404 -- test data
	ix := newIndex()
	rows := make([]catalog.ListingRow, n)
	for i := range rows {
		rows[i] = syntheticRow(r, uuid.NewString())
		if err := ix.apply(rows[i]); err != nil {
			b.Fatal(err)
		}
	}
	ix.finish()
	top := int64(1000)
	for b.Loop() {
		row := &rows[r.IntN(n)]
		top++
		row.Card.UseCount = top
		if err := ix.apply(*row); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHoldsMillion measures telling whether an index of a million templates holds a
// template's row as read, as a reload in place does for every template of the catalog (go test
// -run XXX -bench Holds).
func BenchmarkHoldsMillion(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8)) // #nosec G404 -- test data
	ix := newIndex()
	rows := make([]catalog.ListingRow, 1_000_000)
	byText := func(a, b catalog.ListingLexeme) int { return strings.Compare(a.Text, b.Text) }
	for i := range rows {
		rows[i] = syntheticRow(r, uuid.NewString())
		// A row's lexemes are distinct, as a search vector's are.
		slices.SortFunc(rows[i].Lexemes, byText)
		rows[i].Lexemes = slices.CompactFunc(rows[i].Lexemes, func(a, b catalog.ListingLexeme) bool { return a.Text == b.Text })
		if err := ix.apply(rows[i]); err != nil {
			b.Fatal(err)
		}
	}
	ix.finish()
	for b.Loop() {
		if held, err := ix.holds(rows[r.IntN(len(rows))]); err != nil || !held {
			b.Fatal("a row applied is not held", err)
		}
	}
}

// benchmarkListing measures answering listings from an index of n templates, each with a
// lexeme of its own (as a template's number is) beside shared ones: searches of one and two
// words (relevance and popular), a tag, premium and no filter, each sort, pages 1 to 5, a
// query at a time, its page's cards decoded as Catalog.Templates does (go test -run XXX -bench
// Listing ./services/content-svc/internal/cache/).
func benchmarkListing(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(7, 8)) // #nosec G404 -- test data
	ix := newIndex()
	for i := range n {
		row := syntheticRow(r, uuid.NewString())
		row.Lexemes = append(row.Lexemes, catalog.ListingLexeme{Text: fmt.Sprint(i), Weight: 3})
		if err := ix.apply(row); err != nil {
			b.Fatal(err)
		}
	}
	ix.finish()
	yes := true
	queries := []catalog.TemplateQuery{
		{Words: []string{"alp"}, Sort: catalog.SortRelevance},
		{Words: []string{"gamma1"}, Sort: catalog.SortRelevance},
		{Words: []string{"be", "al"}, Sort: catalog.SortRelevance},
		{Words: []string{"wed"}, Sort: catalog.SortPopular},
		{Words: []string{"1234"}, Sort: catalog.SortRelevance},
		{TagIDs: []string{"t1"}, Sort: catalog.SortNewest},
		{IsPremium: &yes, Sort: catalog.SortRate},
		{Sort: catalog.SortAZ},
		{TagIDs: []string{"t1"}, Words: []string{"gam"}, Sort: catalog.SortPopular},
	}
	i := 0
	var s *scratch
	for b.Loop() {
		q := queries[i%len(queries)]
		m := ix.compile(q, s)
		ix.templateCards(m.page(q.Sort, 20*(i%5), 21))
		m.count()
		s = m.release()
		i++
	}
}

func BenchmarkListing100k(b *testing.B) { benchmarkListing(b, 100_000) }

func BenchmarkUseCountedMillion(b *testing.B) { benchmarkUseCounted(b, 1_000_000) }

func BenchmarkApply100k(b *testing.B) { benchmarkApply(b, 100_000) }

func BenchmarkApplyMillion(b *testing.B) { benchmarkApply(b, 1_000_000) }

func BenchmarkEnterLeaveMillion(b *testing.B) { benchmarkEnterLeave(b, 1_000_000) }
