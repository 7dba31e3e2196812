package cache

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// catalogSize is the number of templates the in-memory specs index.
const catalogSize = 3000

// scan answers q's page (ids) and total by scanning rows, as the SQL listing orders them.
func scan(rows map[string]catalog.ListingRow, q catalog.TemplateQuery, offset, limit int) ([]string, int) {
	type hit struct {
		r     catalog.ListingRow
		score int
	}
	var hits []hit
	for _, r := range rows {
		if q.IsPremium != nil && *q.IsPremium != r.Card.IsPremium || q.Mode != "" && q.Mode != r.Card.PrimaryMode ||
			q.Aspect != "" && !slices.Contains(r.Card.AvailableAspects, q.Aspect) ||
			q.CategoryID != "" && !slices.ContainsFunc(r.CategoryIDs, func(c string) bool { return strings.EqualFold(c, q.CategoryID) }) ||
			slices.ContainsFunc(q.TagIDs, func(t string) bool { return !slices.Contains(r.TagIDs, t) }) {
			continue
		}
		score := 0
		for _, w := range q.Words {
			best := -1
			for _, l := range r.Lexemes {
				if strings.HasPrefix(l.Text, w) {
					best = max(best, int(l.Weight))
				}
			}
			if best < 0 {
				score = -1
				break
			}
			score += best
		}
		if score >= 0 {
			hits = append(hits, hit{r, score})
		}
	}
	id := func(h hit) []byte { u := uuid.MustParse(h.r.ID); return u[:] }
	slices.SortFunc(hits, func(a, b hit) int {
		c := 0
		switch q.Sort {
		case catalog.SortRelevance:
			c = cmp.Or(b.score-a.score, cmp.Compare(b.r.Card.UseCount, a.r.Card.UseCount))
		case catalog.SortNewest:
			c = b.r.CreatedAt.Compare(a.r.CreatedAt)
		case catalog.SortRate:
			c = cmp.Compare(b.r.Card.RateAvg, a.r.Card.RateAvg)
		case catalog.SortAZ:
			return cmp.Or(strings.Compare(a.r.Card.Name, b.r.Card.Name), bytes.Compare(id(a), id(b)))
		default:
			c = cmp.Compare(b.r.Card.UseCount, a.r.Card.UseCount)
		}
		return cmp.Or(c, bytes.Compare(id(b), id(a)))
	})
	var page []string
	for _, h := range hits[min(offset, len(hits)):min(offset+limit, len(hits))] {
		page = append(page, h.r.ID)
	}
	return page, len(hits)
}

// answer answers q's page (ids) and total from the index.
func answer(ix *index, q catalog.TemplateQuery, offset, limit int) ([]string, int) {
	m := ix.compile(q, nil)
	defer m.release()
	var page []string
	for _, e := range m.page(q.Sort, offset, limit) {
		page = append(page, ix.ids[e].String())
	}
	return page, m.count()
}

// randomRow is a template whose filters, keys and words vary with their shares: some values
// and lexemes are in few templates (lists), others in many (bitmaps), and keys tie; its card
// has its own slug, media, rating count and flag too.
func randomRow(r *rand.Rand, id string) catalog.ListingRow {
	pick := func(p float64) bool { return r.Float64() < p }
	row := catalog.ListingRow{ID: id, Live: true, Card: catalog.TemplateCard{ContainerID: id, Slug: fmt.Sprintf("s-%d", r.IntN(1000)),
		Name: fmt.Sprintf("n%d", r.IntN(50)), IsPremium: pick(0.02), IsMockup: pick(0.1), PrimaryMode: "video",
		RateAvg: float64(r.IntN(5)) / 2, RateCount: r.IntN(300), UseCount: r.Int64N(20), AvailableAspects: []string{}}}
	row.CreatedAt = row.CreatedAt.AddDate(0, 0, r.IntN(30))
	switch {
	case pick(0.01):
		row.Card.PrimaryMode = "gif"
	case pick(0.2):
		row.Card.PrimaryMode = "photo"
	}
	for _, a := range []struct {
		v string
		p float64
	}{{"16:9", 0.6}, {"4:5", 0.02}} {
		if pick(a.p) {
			row.Card.AvailableAspects = append(row.Card.AvailableAspects, a.v)
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
	for t, p := range map[string]float64{"al": 0.01, "alp": 0.04, "alpha": 0.5, "alpine": 0.12, "alps": 0.02, "bet": 0.05,
		"beta": 0.01, "gam": 0.2, "gamma": 0.3, "gamut": 0.002} {
		if pick(p) {
			row.Lexemes = append(row.Lexemes, catalog.ListingLexeme{Text: t, Weight: uint8(r.IntN(4))}) // #nosec G115 -- below 4
		}
	}
	if pick(0.3) {
		row.Card.Image, row.Card.Demo = fmt.Sprintf("https://cdn.example/%d.png", r.IntN(100)), "https://cdn.example/demo.mp4"
	}
	return row
}

// sameAnswers expects ix to answer filtered, sorted and searched pages as a scan of rows does,
// and to show each template's card as its row has it.
func sameAnswers(ix *index, rows map[string]catalog.ListingRow) {
	GinkgoHelper()
	sameCards(ix, rows)
	yes := true
	for _, q := range []catalog.TemplateQuery{{Sort: catalog.SortNewest}, {Sort: catalog.SortPopular, TagIDs: []string{"t1"}},
		{Sort: catalog.SortRate, IsPremium: &yes}, {Sort: catalog.SortAZ, Mode: "photo"}, {Sort: catalog.SortAZ, CategoryID: "c2"},
		{Sort: catalog.SortRelevance, Words: []string{"alp"}}, {Sort: catalog.SortRelevance, Words: []string{"gam", "a"}}} {
		for _, offset := range []int{0, 40} {
			wantPage, wantTotal := scan(rows, q, offset, 20)
			gotPage, gotTotal := answer(ix, q, offset, 20)
			Expect(gotTotal).To(Equal(wantTotal), "%+v", q)
			Expect(gotPage).To(Equal(wantPage), "%+v", q)
		}
	}
}

// sameCards expects ix to show each template's card as its row has it.
func sameCards(ix *index, rows map[string]catalog.ListingRow) {
	GinkgoHelper()
	for id, row := range rows {
		s, ok := ix.slotOf(uuid.MustParse(id))
		Expect(ok).To(BeTrue(), id)
		Expect(ix.templateCard(s)).To(Equal(row.Card), id)
	}
}

// filled answers an index of catalogSize random templates and its rows.
func filled(r *rand.Rand) (*index, map[string]catalog.ListingRow, []string) {
	rows := map[string]catalog.ListingRow{}
	ix := newIndex()
	var ids []string
	for range catalogSize {
		row := randomRow(r, uuid.NewString())
		rows[row.ID] = row
		ids = append(ids, row.ID)
		Expect(ix.apply(row)).To(Succeed())
	}
	ix.finish()
	return ix, rows, ids
}

var _ = Describe("a batch of changes", func() {
	It("is undone when a change in its middle panics half applied, the index answering as before the batch", func() {
		r := rand.New(rand.NewPCG(5, 6)) // #nosec G404 -- test data
		ix, rows, ids := filled(r)
		broken := randomRow(r, ids[3])
		broken.Lexemes = append(broken.Lexemes, catalog.ListingLexeme{Text: "quokka", Weight: 3})
		broken.Card.IsPremium, broken.TagIDs = true, append(broken.TagIDs, "t2")
		batch := []catalog.ListingRow{randomRow(r, ids[0]), {ID: ids[1]}, randomRow(r, uuid.NewString()), broken,
			randomRow(r, ids[4]), {ID: ids[5]}}
		byText := slices.Clone(ix.byText)
		// A bug: the new word's place among the lexemes panics, after the template left its
		// sets and orders' keys changed, and before its postings and orders are done.
		ix.byText = append(ix.byText, 1<<30) // "quokka" sorts after every word: its search reaches this
		err := ix.applyAll(batch)
		Expect(err).To(MatchError(errPanicked))
		Expect(err).NotTo(MatchError(errBroken))
		ix.byText = byText
		Expect(ix.n).To(Equal(len(rows)))
		sameAnswers(ix, rows)

		for _, row := range batch {
			if row.ID == broken.ID {
				row = randomRow(r, row.ID)
			}
			if row.Live {
				rows[row.ID] = row
			} else {
				delete(rows, row.ID)
			}
		}
		batch[3] = rows[broken.ID]
		Expect(ix.applyAll(batch)).To(Succeed(), "the index still takes changes")
		sameAnswers(ix, rows)
	})

	It("keeps its orders and labels exact while one template after another becomes the most used", func() {
		r := rand.New(rand.NewPCG(10, 11)) // #nosec G404 -- test data
		ix, rows, ids := filled(r)
		for i := range 5000 {
			row := rows[ids[r.IntN(len(ids))]]
			row.Card.UseCount = int64(100 + i)
			rows[row.ID] = row
			Expect(ix.apply(row)).To(Succeed())
		}
		Expect(ix.check()).To(Succeed())
		sameAnswers(ix, rows)
	})

	It("says the index is broken when it cannot be put back, so that it does not answer", func() {
		r := rand.New(rand.NewPCG(8, 9)) // #nosec G404 -- test data
		ix, _, ids := filled(r)
		// A bug every change of the template trips on, undoing it too: its place is lost.
		s, _ := ix.slotOf(uuid.MustParse(ids[0]))
		losePlace(ix, s)
		Expect(ix.applyAll([]catalog.ListingRow{randomRow(r, ids[0]), randomRow(r, ids[1])})).To(MatchError(errBroken))
	})
})

var _ = Describe("the index in memory", func() {
	It("keeps words of one template, renames, cards and taken-out templates exact while cards (names included) and word records are copied anew", func() {
		r := rand.New(rand.NewPCG(12, 13)) // #nosec G404 -- test data
		ix, rows, ids := filled(r)
		cards, records := 0, 0
		for i := range 4 * catalogSize {
			cardGarbage, lexGarbage := ix.cards.garbage, ix.lexes.garbage
			id := ids[r.IntN(len(ids))]
			if r.IntN(10) == 0 {
				delete(rows, id)
				Expect(ix.apply(catalog.ListingRow{ID: id})).To(Succeed())
			} else {
				// A word of its own (in one template, or a few at a time) and a new name.
				row := randomRow(r, id)
				row.Card.Name = fmt.Sprintf("renamed %d", i)
				row.Lexemes = append(row.Lexemes, catalog.ListingLexeme{Text: fmt.Sprintf("z%d", i%500), Weight: uint8(i % 4)}) // #nosec G115 -- below 4
				rows[id] = row
				Expect(ix.apply(row)).To(Succeed())
			}
			if ix.cards.garbage < cardGarbage {
				cards++
			}
			if ix.lexes.garbage < lexGarbage {
				records++
			}
		}
		Expect(cards).To(BeNumerically(">", 0), "the cards were copied anew")
		Expect(records).To(BeNumerically(">", 0), "the word records were copied anew")
		Expect(ix.check()).To(Succeed())
		sameAnswers(ix, rows)
		for _, w := range []string{"z1", "z12", "z123", "z4", "z"} {
			q := catalog.TemplateQuery{Sort: catalog.SortRelevance, Words: []string{w}}
			wantPage, wantTotal := scan(rows, q, 0, 30)
			gotPage, gotTotal := answer(ix, q, 0, 30)
			Expect(gotTotal).To(Equal(wantTotal), "%+v", q)
			Expect(gotPage).To(Equal(wantPage), "%+v", q)
		}
		for id, row := range rows {
			p, err := ix.prior(id)
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Card.Name).To(Equal(row.Card.Name))
			Expect(p.Lexemes).To(ConsistOf(row.Lexemes), "the words the index holds for %s", id)
		}
	})

	It("holds each template's row as applied, and no row that differs in anything a listing tests, sorts by or shows", func() {
		r := rand.New(rand.NewPCG(18, 19)) // #nosec G404 -- test data
		ix, rows, ids := filled(r)
		for _, id := range ids[:catalogSize/2] { // changed once the index is built: lists, bitmaps and records anew
			row := randomRow(r, id)
			row.Lexemes = append(row.Lexemes, catalog.ListingLexeme{Text: "own-" + id, Weight: 6})
			rows[id] = row
			Expect(ix.apply(row)).To(Succeed())
		}
		for _, row := range rows {
			// As the store may read it: its values in another order, some twice.
			row.CategoryIDs = slices.Clone(row.CategoryIDs)
			slices.Reverse(row.CategoryIDs)
			row.TagIDs = append(row.TagIDs, row.TagIDs...)
			Expect(ix.holds(row)).To(BeTrue(), "%+v", row)
		}
		Expect(ix.holds(catalog.ListingRow{ID: uuid.NewString()})).To(BeTrue(), "a template out of the catalog")
		row := rows[ids[0]]
		for what, change := range map[string]func(*catalog.ListingRow){
			"out of the catalog": func(r *catalog.ListingRow) { r.Live = false },
			"premium":            func(r *catalog.ListingRow) { r.Card.IsPremium = !r.Card.IsPremium },
			"mode":               func(r *catalog.ListingRow) { r.Card.PrimaryMode = "gif-" + r.Card.PrimaryMode },
			"created":            func(r *catalog.ListingRow) { r.CreatedAt = r.CreatedAt.Add(time.Microsecond) },
			"uses":               func(r *catalog.ListingRow) { r.Card.UseCount++ },
			"rating":             func(r *catalog.ListingRow) { r.Card.RateAvg += 0.5 },
			"name":               func(r *catalog.ListingRow) { r.Card.Name += "!" },
			"aspects": func(r *catalog.ListingRow) {
				r.Card.AvailableAspects = append(slices.Clone(r.Card.AvailableAspects), "21:9")
			},
			"categories": func(r *catalog.ListingRow) { r.CategoryIDs = append(slices.Clone(r.CategoryIDs), "c9") },
			"tags":       func(r *catalog.ListingRow) { r.TagIDs = append(slices.Clone(r.TagIDs), "t9") },
			"a word": func(r *catalog.ListingRow) {
				r.Lexemes = append(slices.Clone(r.Lexemes), catalog.ListingLexeme{Text: "delta"})
			},
			"a word's weight": func(r *catalog.ListingRow) {
				r.Lexemes = slices.Clone(r.Lexemes)
				r.Lexemes[0].Weight = (r.Lexemes[0].Weight + 1) & 3
			},
			"rating count": func(r *catalog.ListingRow) { r.Card.RateCount++ },
			"mockup":       func(r *catalog.ListingRow) { r.Card.IsMockup = !r.Card.IsMockup },
			"slug":         func(r *catalog.ListingRow) { r.Card.Slug += "-2" },
			"image":        func(r *catalog.ListingRow) { r.Card.Image += "?2" },
			"demo":         func(r *catalog.ListingRow) { r.Card.Demo += "?2" },
			"mini demo":    func(r *catalog.ListingRow) { r.Card.MiniDemo += "?2" },
		} {
			changed := row
			change(&changed)
			Expect(ix.holds(changed)).To(BeFalse(), what)
		}
	})

	It("shares the cards' aspect lists up to its bound, a card with another list holding it itself", func() {
		r := rand.New(rand.NewPCG(14, 15)) // #nosec G404 -- test data
		ix, rows := newIndex(), map[string]catalog.ListingRow{}
		for i := range maxAspectLists + 50 {
			row := randomRow(r, uuid.NewString())
			row.Card.AvailableAspects = []string{"16:9", fmt.Sprint(i)}
			rows[row.ID] = row
			Expect(ix.apply(row)).To(Succeed())
		}
		ix.finish()
		Expect(ix.aspectLists).To(HaveLen(maxAspectLists))
		sameCards(ix, rows)
	})

	It("keeps a template's card and lexemes where they are when only its uses or rating change", func() {
		r := rand.New(rand.NewPCG(16, 17)) // #nosec G404 -- test data
		ix, rows, ids := filled(r)
		change := func(round int) {
			for i, id := range ids {
				row := rows[id]
				row.Card.UseCount, row.Card.RateAvg = int64(round*len(ids)+i), float64((i+round)%11)/2
				rows[id] = row
				Expect(ix.apply(row)).To(Succeed())
			}
		}
		size := len(ix.cards.b)
		// The first change to a template read in bulk may write its lexemes' record again:
		// read before its common words became bitmaps (finish), the record lists them.
		change(1)
		Expect(len(ix.cards.b)).To(Equal(size))
		lexes, garbage := len(ix.lexes.b), ix.lexes.garbage
		change(2)
		Expect(len(ix.cards.b)).To(Equal(size))
		Expect(len(ix.lexes.b)).To(Equal(lexes))
		Expect(ix.lexes.garbage).To(Equal(garbage))
		sameAnswers(ix, rows)
	})

	It("counts, pages and ranks every filter combination and random searches as a scan of the rows does, change after change", func() {
		r := rand.New(rand.NewPCG(7, 11)) // #nosec G404 -- test data
		rows := map[string]catalog.ListingRow{}
		ix := newIndex()
		for range catalogSize {
			row := randomRow(r, uuid.NewString())
			rows[row.ID] = row
			Expect(ix.apply(row)).To(Succeed())
		}
		ix.finish()
		Expect(ix.premium.bits).To(BeNil(), "premium (2 %: the 1/32 threshold is more than 4 deviations away) is a list")
		Expect(ix.sets[filterMode]["gif"].bits).To(BeNil(), "gif (1 %) is a list")
		Expect(ix.sets[filterTag]["t1"].bits).NotTo(BeNil(), "t1 (40 %) is a bitmap")
		Expect(ix.bitsOf(ix.lexeme("alpha"))).NotTo(BeNil(), "alpha (50 %) is a bitmap")
		Expect(ix.bitsOf(ix.lexeme("beta"))).To(BeNil(), "beta (1 %) is a list")

		yes, no := true, false
		words := []string{"a", "al", "alp", "alph", "alps", "alpine", "b", "beta", "bet", "g", "gamu", "gamma", "zeta"}
		compared := 0
		for step := range 4 {
			for _, premium := range []*bool{nil, &yes, &no} {
				for _, mode := range []string{"", "video", "gif", "none"} {
					for _, aspect := range []string{"", "16:9", "4:5"} {
						for _, cat := range []string{"", "c1", "C2"} {
							for _, tags := range [][]string{nil, {"t1"}, {"t2"}, {"t1", "t3"}, {"t3", "t2"}} {
								q := catalog.TemplateQuery{IsPremium: premium, Mode: mode, Aspect: aspect, CategoryID: cat, TagIDs: tags,
									Sort: catalog.Sorts()[compared%4]}
								wantPage, wantTotal := scan(rows, q, 3, 7)
								gotPage, gotTotal := answer(ix, q, 3, 7)
								Expect(gotTotal).To(Equal(wantTotal), "step %d: %+v", step, q)
								Expect(gotPage).To(Equal(wantPage), "step %d: %+v", step, q)
								compared++
							}
						}
					}
				}
			}
			for range 400 {
				q := catalog.TemplateQuery{Sort: catalog.SortRelevance}
				for range 1 + r.IntN(3) {
					q.Words = append(q.Words, words[r.IntN(len(words))])
				}
				switch r.IntN(3) {
				case 1:
					q.IsPremium = &yes
				case 2:
					q.TagIDs = []string{"t1"}
				}
				offset := r.IntN(3) * 10
				wantPage, wantTotal := scan(rows, q, offset, 10)
				gotPage, gotTotal := answer(ix, q, offset, 10)
				Expect(gotTotal).To(Equal(wantTotal), "step %d: %+v", step, q)
				Expect(gotPage).To(Equal(wantPage), "step %d: %+v", step, q)
				compared++
			}
			// Changes: templates changed in place, taken out and added (reusing freed slots).
			ids := make([]string, 0, len(rows))
			for id := range rows {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			for range 300 {
				id := ids[r.IntN(len(ids))]
				switch r.IntN(3) {
				case 0:
					row := randomRow(r, id)
					rows[id] = row
					Expect(ix.apply(row)).To(Succeed())
				case 1:
					if _, ok := rows[id]; ok {
						delete(rows, id)
						Expect(ix.apply(catalog.ListingRow{ID: id})).To(Succeed())
					}
				default:
					row := randomRow(r, uuid.NewString())
					rows[row.ID] = row
					Expect(ix.apply(row)).To(Succeed())
				}
			}
			Expect(ix.n).To(Equal(len(rows)))
			Expect(ix.check()).To(Succeed())
			sameCards(ix, rows)
		}
		Expect(compared).To(Equal(4 * (540 + 400)))
	})
})

var _ = Describe("records read in bulk", func() {
	It("grow once past the sample, to what the reserved slots take, and keep every record", func() {
		const slots = 100_000
		r := newRecords(true)
		r.at = make([]uint32, 0, slots)
		grew := 0
		for s := range int32(slots) {
			r.at = append(r.at, 0)
			before := cap(r.b)
			r.set(s, []byte(fmt.Sprintf("record %08d", s)), true)
			if cap(r.b) != before && len(r.at) >= growSample {
				grew++
			}
		}
		Expect(grew).To(Equal(1), "growths past the sample")
		Expect(cap(r.b)).To(BeNumerically("<=", len(r.b)+len(r.b)/8+64), "room past what the records take")
		for _, s := range []int32{0, growSample - 1, growSample, slots - 1} {
			Expect(string(r.of(s))).To(Equal(fmt.Sprintf("record %08d", s)))
		}
	})
})
