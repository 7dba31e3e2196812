package cache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/pglisten"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// rowsLister lists rows as given, without cards or lexemes.
type rowsLister []catalog.ListingRow

func (l rowsLister) Listing(_ context.Context, _ int, v catalog.ListingVisitor) error {
	for _, r := range l {
		if err := v.Row(r); err != nil {
			return err
		}
	}
	return nil
}

func (rowsLister) TemplateCards(context.Context, []string) ([]catalog.TemplateCard, error) {
	return nil, errors.New("no cards")
}

// catalogSize is the number of rows the filter-set spec indexes.
const catalogSize = 3000

var _ = Describe("the index's filter sets", func() {
	// counted is the catalog's size as counted before the read; rows added since then (0: the
	// catalog was empty) must be indexed all the same.
	DescribeTable("count and page every filter combination as a scan of the rows does, sparse (lists) and dense (bitmaps)", func(counted int) {
		n := catalogSize
		r := rand.New(rand.NewPCG(7, 11)) // #nosec G404 -- test data
		pick := func(p float64) bool { return r.Float64() < p }
		newest := r.Perm(n)
		rows := make(rowsLister, n)
		for i := range rows {
			row := catalog.ListingRow{ID: uuid.NewString(), IsPremium: i%40 == 0, PrimaryMode: "video"}
			switch {
			case i%97 == 0:
				row.PrimaryMode = "gif" // 1 %: a list
			case pick(0.2):
				row.PrimaryMode = "photo"
			}
			for a, p := range map[string]float64{"16:9": 0.6, "4:5": 0.02} {
				if pick(p) {
					row.Aspects = append(row.Aspects, a)
				}
			}
			for c, p := range map[string]float64{"C1": 0.5, "c2": 0.01} {
				if pick(p) {
					row.CategoryIDs = append(row.CategoryIDs, c)
				}
			}
			for t, p := range map[string]float64{"t1": 0.4, "t2": 0.02, "t3": 0.1} {
				if pick(p) {
					row.TagIDs = append(row.TagIDs, t)
				}
			}
			row.Places = [4]int{newest[i] + 1, i + 1, n - i, i + 1}
			rows[i] = row
		}
		ix, err := buildIndex(context.Background(), rows, pglisten.Ticket{}, counted, IndexOptions{MaxTemplates: n})
		Expect(err).NotTo(HaveOccurred())
		Expect(len(ix.ids)).To(Equal(n))
		if counted == n {
			Expect(ix.premium.bits).To(BeNil(), "premium (2.5 %) is a list")
			Expect(ix.modes["gif"].bits).To(BeNil(), "gif (1 %) is a list")
		}
		Expect(ix.tags["t1"].bits).NotTo(BeNil(), "t1 (40 %) is a bitmap")

		passes := func(row catalog.ListingRow, q catalog.TemplateQuery) bool {
			return (q.IsPremium == nil || *q.IsPremium == row.IsPremium) &&
				(q.Mode == "" || q.Mode == row.PrimaryMode) &&
				(q.Aspect == "" || slices.Contains(row.Aspects, q.Aspect)) &&
				(q.CategoryID == "" || slices.ContainsFunc(row.CategoryIDs, func(c string) bool { return strings.EqualFold(c, q.CategoryID) })) &&
				!slices.ContainsFunc(q.TagIDs, func(t string) bool { return !slices.Contains(row.TagIDs, t) })
		}
		yes, no := true, false
		compared := 0
		for _, premium := range []*bool{nil, &yes, &no} {
			for _, mode := range []string{"", "video", "gif", "none"} {
				for _, aspect := range []string{"", "16:9", "4:5"} {
					for _, cat := range []string{"", "c1", "C2"} {
						for _, tags := range [][]string{nil, {"t1"}, {"t2"}, {"t1", "t3"}, {"t3", "t2"}} {
							q := catalog.TemplateQuery{IsPremium: premium, Mode: mode, Aspect: aspect, CategoryID: cat, TagIDs: tags}
							what := fmt.Sprintf("%+v", q)
							var want []int32
							for i, row := range rows {
								if passes(row, q) {
									want = append(want, int32(i)) // #nosec G115 -- below n
								}
							}
							m, ok := ix.compile(q)
							Expect(ok).To(BeTrue())
							Expect(m.count()).To(Equal(len(want)), what)
							popular, _, _ := m.page(catalog.SortPopular, 3, 7)
							Expect(popular).To(Equal(window(want, 3, 7)), what)
							byNewest := slices.Clone(want)
							slices.SortFunc(byNewest, func(a, b int32) int { return newest[a] - newest[b] })
							page, _, _ := m.page(catalog.SortNewest, 0, 5)
							Expect(page).To(Equal(window(byNewest, 0, 5)), what)
							m.release()
							compared++
						}
					}
				}
			}
		}
		Expect(compared).To(Equal(540))
	},
		Entry("counted as it was read", catalogSize),
		Entry("counted when empty", 0),
		Entry("counted when smaller", 100),
	)
})

// searchLister lists rows, then lexemes, as given.
type searchLister struct {
	rowsLister
	lexemes []catalog.ListingLexeme
}

func (l searchLister) Listing(ctx context.Context, cards int, v catalog.ListingVisitor) error {
	if err := l.rowsLister.Listing(ctx, cards, v); err != nil {
		return err
	}
	for _, x := range l.lexemes {
		if err := v.Lexeme(x); err != nil {
			return err
		}
	}
	return nil
}

// lexemeShare is a search lexeme and the share of the catalog that has it.
type lexemeShare struct {
	text  string
	share float64
}

// randomLexemes gives each lexeme (in byte order) to about its share of n entries, each with a
// random weight.
func randomLexemes(r *rand.Rand, n int, shares []lexemeShare) []catalog.ListingLexeme {
	lexemes := make([]catalog.ListingLexeme, 0, len(shares))
	for _, sh := range shares {
		x := catalog.ListingLexeme{Text: sh.text}
		for e := range int32(n) { // #nosec G115 -- a test catalog
			if r.Float64() < sh.share {
				x.Entries, x.Weights = append(x.Entries, e), append(x.Weights, uint8(r.IntN(4))) // #nosec G115 -- below 4
			}
		}
		lexemes = append(lexemes, x)
	}
	return lexemes
}

var _ = Describe("the index's search", func() {
	It("matches, totals and ranks words as a scan of the postings does, over bitmaps and lists, query after query", func() {
		n := catalogSize
		r := rand.New(rand.NewPCG(3, 5)) // #nosec G404 -- test data
		rows := make(rowsLister, n)
		for i := range rows {
			rows[i] = catalog.ListingRow{ID: uuid.NewString(), IsPremium: i%7 == 0, PrimaryMode: "video", Places: [4]int{i + 1, i + 1, i + 1, i + 1}}
			if r.Float64() < 0.3 {
				rows[i].TagIDs = []string{"t1"}
			}
		}
		// Each lexeme's share of the catalog: past 3/32 it is a bitmap, else a list.
		lexemes := randomLexemes(r, n, []lexemeShare{
			{"al", 0.01}, {"alp", 0.04}, {"alpha", 0.5}, {"alpine", 0.12}, {"alps", 0.02},
			{"bet", 0.05}, {"beta", 0.01}, {"gam", 0.2}, {"gamma", 0.3}, {"gamut", 0.002},
		})
		ix, err := buildIndex(context.Background(), searchLister{rows, lexemes}, pglisten.Ticket{}, n, IndexOptions{MaxTemplates: n})
		Expect(err).NotTo(HaveOccurred())
		Expect(ix.dense).To(HaveLen(4), "alpha, alpine, gam and gamma are bitmaps")

		words := []string{"a", "al", "alp", "alph", "alps", "alpine", "b", "beta", "bet", "g", "gamu", "gamma", "zeta"}
		yes := true
		compared := 0
		for range 400 {
			q := catalog.TemplateQuery{}
			for range 1 + r.IntN(3) {
				q.Words = append(q.Words, words[r.IntN(len(words))])
			}
			switch r.IntN(3) {
			case 1:
				q.IsPremium = &yes
			case 2:
				q.TagIDs = []string{"t1"}
			}
			what := fmt.Sprintf("%q premium %v tags %v", q.Words, q.IsPremium != nil, q.TagIDs)
			type scored struct {
				e     int32
				score int
			}
			var want []scored
			for e, row := range rows {
				if q.IsPremium != nil && !row.IsPremium || len(q.TagIDs) > 0 && len(row.TagIDs) == 0 {
					continue
				}
				score := 0
				for _, w := range q.Words {
					best := -1
					for _, x := range lexemes {
						if i, ok := slices.BinarySearch(x.Entries, int32(e)); ok && strings.HasPrefix(x.Text, w) { // #nosec G115 -- below n
							best = max(best, int(x.Weights[i]))
						}
					}
					if best < 0 {
						score = -1
						break
					}
					score += best
				}
				if score >= 0 {
					want = append(want, scored{int32(e), score}) // #nosec G115 -- below n
				}
			}
			slices.SortStableFunc(want, func(a, b scored) int { return b.score - a.score })
			var ranked []int32
			for _, s := range want {
				ranked = append(ranked, s.e)
			}
			offset := r.IntN(3) * 10
			m, ok := ix.compile(q)
			Expect(ok).To(BeTrue())
			Expect(m.count()).To(Equal(len(want)), what)
			page, total, counted := m.page(catalog.SortRelevance, offset, 10)
			Expect(counted).To(BeTrue())
			Expect(total).To(Equal(len(want)), what)
			Expect(page).To(Equal(window(ranked, offset, 10)), what)
			m.release()
			compared++
		}
		Expect(compared).To(Equal(400))
	})
})
