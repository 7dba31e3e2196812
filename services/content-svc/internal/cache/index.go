package cache

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/motionstudio/platform/pkg/pglisten"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// index is an immutable snapshot of the catalog's cards and of what its listings test and sort
// by, read with one query (Listing), so that any page and total is computed in memory without a
// database round trip. Entries are numbered 0..n-1; per-entry lists are kept flat
// (an entry's categories are cats[catAt[e]:catAt[e+1]]), as are the postings of each lexeme.
//
// premium, mode and aspects repeat what the cards say in compact arrays, so that a walk over
// the whole catalog reads a few bytes an entry rather than each card.
type index struct {
	at      pglisten.Ticket // the Catalog generation it was read at
	cards   []catalog.TemplateCard
	premium []bool
	mode    []uint32
	aspects []uint64 // a bit per aspect code
	catAt   []int32
	cats    []uint32
	tagAt   []int32
	tags    []uint32
	// orders holds the entries in each of catalog.Sorts.
	orders map[string][]int32
	// lexemes are sorted; lexeme l's entries and weights are post[postAt[l]:postAt[l+1]].
	lexemes []string
	postAt  []int32
	post    []int32
	weight  []uint8

	modeCodes, aspectCodes, catCodes, tagCodes map[string]uint32

	// spare holds scratches sized for this index that queries returned, for the next ones (a
	// sync.Pool would drop them at every GC, and a search's scratch is 3 bytes an entry).
	spare chan *scratch
}

// errIndexTooLarge stops a build over a catalog larger than the bound.
var errIndexTooLarge = errors.New("cache: the catalog has more templates than the index may hold")

// maxSearchWordLen is the longest search word the index answers; longer ones go to the database.
const maxSearchWordLen = 100

// buildIndex reads the catalog of about n templates through listing into an index read at t,
// failing with errIndexTooLarge past maxTemplates.
func buildIndex(ctx context.Context, listing func(context.Context, func(catalog.ListingRow) error) error, t pglisten.Ticket, n, maxTemplates int) (*index, error) {
	ix := &index{at: t, orders: map[string][]int32{}, cards: make([]catalog.TemplateCard, 0, n),
		premium: make([]bool, 0, n), mode: make([]uint32, 0, n), aspects: make([]uint64, 0, n),
		catAt: make([]int32, 0, n+1), tagAt: make([]int32, 0, n+1),
		modeCodes: map[string]uint32{}, aspectCodes: map[string]uint32{}, catCodes: map[string]uint32{}, tagCodes: map[string]uint32{}}
	var places [4][]int32
	for i := range places {
		places[i] = make([]int32, 0, n)
	}
	postings := map[string][]posting{}
	// Cards share one slice per combination of aspects rather than one each.
	aspectLists := map[string][]string{}
	code := func(codes map[string]uint32, s string) uint32 {
		c, ok := codes[s]
		if !ok {
			c = uint32(len(codes)) // #nosec G115 -- at most one code per entry, and entries are bounded by maxTemplates
			codes[s] = c
		}
		return c
	}
	err := listing(ctx, func(r catalog.ListingRow) error {
		if len(ix.cards) >= maxTemplates {
			return errIndexTooLarge
		}
		e := int32(len(ix.cards)) // #nosec G115 -- bounded by maxTemplates
		key := strings.Join(r.Card.AvailableAspects, ",")
		if shared, ok := aspectLists[key]; ok {
			r.Card.AvailableAspects = shared
		} else {
			aspectLists[key] = r.Card.AvailableAspects
		}
		ix.cards = append(ix.cards, r.Card)
		ix.premium = append(ix.premium, r.Card.IsPremium)
		ix.mode = append(ix.mode, code(ix.modeCodes, r.Card.PrimaryMode))
		var bits uint64
		for _, a := range r.Card.AvailableAspects {
			bits |= 1 << (code(ix.aspectCodes, a) % 64)
		}
		ix.aspects = append(ix.aspects, bits)
		ix.catAt = append(ix.catAt, int32(len(ix.cats))) // #nosec G115 -- a few per entry
		for _, c := range r.CategoryIDs {
			ix.cats = append(ix.cats, code(ix.catCodes, strings.ToLower(c)))
		}
		ix.tagAt = append(ix.tagAt, int32(len(ix.tags))) // #nosec G115 -- a few per entry
		for _, t := range r.TagIDs {
			ix.tags = append(ix.tags, code(ix.tagCodes, strings.ToLower(t)))
		}
		for i, p := range r.Places {
			places[i] = append(places[i], int32(p)) // #nosec G115 -- bounded by maxTemplates
		}
		for _, l := range r.Lexemes {
			p, ok := postings[l.Text]
			if !ok {
				// The key outlives the row, whose lexemes may share one string.
				l.Text = strings.Clone(l.Text)
			}
			postings[l.Text] = append(p, posting{entry: e, weight: l.Weight})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(ix.aspectCodes) > 64 {
		return nil, fmt.Errorf("cache: %d distinct aspects, the index holds at most 64", len(ix.aspectCodes))
	}
	n = len(ix.cards)
	ix.catAt = append(ix.catAt, int32(len(ix.cats))) // #nosec G115 -- see above
	ix.tagAt = append(ix.tagAt, int32(len(ix.tags))) // #nosec G115 -- see above
	for i, sort := range catalog.Sorts() {
		order := make([]int32, n)
		for e, p := range places[i] {
			if p < 1 || int(p) > n {
				return nil, fmt.Errorf("cache: listing place %d of %d", p, n)
			}
			order[p-1] = int32(e) // #nosec G115 -- bounded by maxTemplates
		}
		ix.orders[sort] = order
	}
	ix.lexemes = make([]string, 0, len(postings))
	for l := range postings {
		ix.lexemes = append(ix.lexemes, l)
	}
	slices.Sort(ix.lexemes)
	ix.postAt = make([]int32, 0, len(ix.lexemes)+1)
	total := 0
	for _, p := range postings {
		total += len(p)
	}
	ix.post, ix.weight = make([]int32, 0, total), make([]uint8, 0, total)
	for _, l := range ix.lexemes {
		ix.postAt = append(ix.postAt, int32(len(ix.post))) // #nosec G115 -- a few dozen per entry
		for _, p := range postings[l] {
			ix.post, ix.weight = append(ix.post, p.entry), append(ix.weight, p.weight)
		}
	}
	ix.postAt = append(ix.postAt, int32(len(ix.post))) // #nosec G115 -- see above
	ix.spare = make(chan *scratch, 2*runtime.GOMAXPROCS(0))
	return ix, nil
}

type posting struct {
	entry  int32
	weight uint8
}

// scratch is a query's per-entry state: how many words matched so far, the current word's
// best weight and the summed weights.
type scratch struct {
	hits, best, score []uint8
	touched           []int32
}

// match is a query compiled against an index: ok tells whether an entry passes.
type match struct {
	ix      *index
	none    bool  // a filter names something no template has
	premium int   // -1 any, else 0 or 1
	mode    int64 // -1 any
	aspect  uint64
	cat     int64 // -1 any
	tags    []uint32
	words   int
	s       *scratch
}

// compile answers q as a match, and false when the index cannot answer it exactly (a search
// word the database might tokenise otherwise: anything but ASCII letters and digits, or a
// very long word). The caller releases the match.
func (ix *index) compile(q catalog.TemplateQuery) (*match, bool) {
	for _, w := range q.Words {
		if len(w) == 0 || len(w) > maxSearchWordLen || strings.IndexFunc(w, func(r rune) bool {
			return (r < 'a' || r > 'z') && (r < '0' || r > '9')
		}) >= 0 {
			return nil, false
		}
	}
	m := &match{ix: ix, premium: -1, mode: -1, cat: -1, words: len(q.Words)}
	lookup := func(codes map[string]uint32, s string) uint32 {
		c, ok := codes[s]
		m.none = m.none || !ok
		return c
	}
	if q.IsPremium != nil {
		m.premium = 0
		if *q.IsPremium {
			m.premium = 1
		}
	}
	if q.Mode != "" {
		m.mode = int64(lookup(ix.modeCodes, q.Mode))
	}
	if q.Aspect != "" {
		m.aspect = 1 << (lookup(ix.aspectCodes, q.Aspect) % 64)
	}
	if q.CategoryID != "" {
		m.cat = int64(lookup(ix.catCodes, strings.ToLower(q.CategoryID)))
	}
	for _, t := range q.TagIDs {
		m.tags = append(m.tags, lookup(ix.tagCodes, strings.ToLower(t)))
	}
	if m.words > 0 && !m.none {
		m.s = ix.takeScratch()
		for i, w := range q.Words {
			m.matchWord(uint8(i), w) // #nosec G115 -- at most 10 words
		}
	}
	return m, true
}

// matchWord counts word i for the entries that matched every earlier word and have a lexeme
// starting with w, adding the best weight among those lexemes to their score.
func (m *match) matchWord(i uint8, w string) {
	ix, s := m.ix, m.s
	s.touched = s.touched[:0]
	first, _ := slices.BinarySearch(ix.lexemes, w)
	for l := first; l < len(ix.lexemes) && strings.HasPrefix(ix.lexemes[l], w); l++ {
		for p := ix.postAt[l]; p < ix.postAt[l+1]; p++ {
			e, wt := ix.post[p], ix.weight[p]
			if s.hits[e] != i {
				continue
			}
			if s.best[e] == 0 {
				s.touched = append(s.touched, e)
			}
			s.best[e] = max(s.best[e], wt+1)
		}
	}
	for _, e := range s.touched {
		s.hits[e]++
		s.score[e] += s.best[e] - 1
		s.best[e] = 0
	}
}

// takeScratch answers a spare scratch, or a new one.
func (ix *index) takeScratch() *scratch {
	select {
	case s := <-ix.spare:
		return s
	default:
		n := len(ix.cards)
		return &scratch{hits: make([]uint8, n), best: make([]uint8, n), score: make([]uint8, n)}
	}
}

// release clears the scratch and keeps it for another query, unless enough are kept.
func (m *match) release() {
	if m.s == nil {
		return
	}
	clear(m.s.hits)
	clear(m.s.score)
	select {
	case m.ix.spare <- m.s:
	default:
	}
	m.s = nil
}

func (m *match) ok(e int32) bool {
	ix := m.ix
	switch {
	case m.words > 0 && int(m.s.hits[e]) != m.words,
		m.premium >= 0 && ix.premium[e] != (m.premium == 1),
		m.mode >= 0 && int64(ix.mode[e]) != m.mode,
		m.aspect != 0 && ix.aspects[e]&m.aspect == 0:
		return false
	}
	if m.cat >= 0 && !slices.Contains(ix.cats[ix.catAt[e]:ix.catAt[e+1]], uint32(m.cat)) { // #nosec G115 -- a code
		return false
	}
	for _, t := range m.tags {
		if !slices.Contains(ix.tags[ix.tagAt[e]:ix.tagAt[e+1]], t) {
			return false
		}
	}
	return true
}

// count answers how many entries pass: of those matching every search word (the last word's
// touched entries), or of all.
func (m *match) count() int {
	if m.none {
		return 0
	}
	n := 0
	if m.words > 0 {
		for _, e := range m.s.touched {
			if m.ok(e) {
				n++
			}
		}
		return n
	}
	for e := range int32(len(m.ix.cards)) { // #nosec G115 -- bounded by maxTemplates
		if m.ok(e) {
			n++
		}
	}
	return n
}

// page answers the cards of up to limit passing entries after the first offset in the order of
// sort: walking that order, or, for relevance, the popular order into one bucket per score;
// the relevance walk passes every match, so it answers their number too (counted).
func (m *match) page(sort string, offset, limit int) (cards []catalog.TemplateCard, total int, counted bool) {
	cards = []catalog.TemplateCard{}
	if m.none {
		return cards, 0, true
	}
	if sort != catalog.SortRelevance {
		for _, e := range m.ix.orders[sort] {
			if len(cards) == limit {
				break
			}
			if m.ok(e) {
				if offset > 0 {
					offset--
					continue
				}
				cards = append(cards, m.ix.cards[e])
			}
		}
		return cards, 0, false
	}
	var byScore [][]int32
	for _, e := range m.ix.orders[catalog.SortPopular] {
		if m.ok(e) {
			sc := int(m.s.score[e])
			if sc >= len(byScore) {
				byScore = append(byScore, make([][]int32, sc+1-len(byScore))...)
			}
			byScore[sc] = append(byScore[sc], e)
			total++
		}
	}
	for sc := len(byScore) - 1; sc >= 0 && len(cards) < limit; sc-- {
		bucket := byScore[sc]
		skip := min(offset, len(bucket))
		offset -= skip
		for _, e := range bucket[skip:min(len(bucket), skip+limit-len(cards))] {
			cards = append(cards, m.ix.cards[e])
		}
	}
	return cards, total, true
}

// size estimates the bytes the index holds.
func (ix *index) size() int {
	n := cardsSize(ix.cards) + len(ix.cards)*(1+4+8+4+4+4*4+4+3)
	n += 4*len(ix.cats) + 4*len(ix.tags) + 5*len(ix.post) + 4*len(ix.postAt)
	for _, l := range ix.lexemes {
		n += 16 + len(l)
	}
	return n
}
