package cache

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/pkg/pglisten"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// index is an immutable snapshot of what the catalog's listings test and sort by, read as one
// snapshot (Lister.Listing), so that any page and total is computed in memory without a
// database round trip. Entries are numbered 0..n-1 in the popular order. Each filter value
// (premium, a mode, an aspect, a category, a tag) is the set of its entries, and each search
// lexeme its postings, kept as sorted lists or, once dense, as bitmaps, so that a million
// templates cost a few thousand allocations rather than millions and a count of bitmap filters
// is a word-wise AND.
//
// It keeps the cards of its first entries (the most used templates); a page showing others
// reads their cards by id in one query.
type index struct {
	at   pglisten.Ticket // the Catalog generation it was read at
	src  Lister
	ids  []uuid.UUID
	kept []catalog.TemplateCard // the cards of entries 0..len(kept)-1
	// premium holds the premium entries; the others are the rest. modes, aspects, cats and
	// tags hold each value's entries (category and tag ids lower-cased).
	premium                    *entrySet
	modes, aspects, cats, tags map[string]*entrySet
	// orders holds the entries in each of catalog.Sorts but the popular one, which is the
	// entries' own order.
	orders map[string][]int32
	// ranks holds each entry's place (0 first) in each order of orders.
	ranks map[string][]int32
	// Lexeme l is text[textAt[l]:textAt[l+1]], in byte order. Its postings are
	// post[postAt[l]:postAt[l+1]] (entry<<2 | weight, ascending) or, when that range is empty,
	// the bitmap dense[l]: a lexeme in more than 3/32 of the entries costs 3 bits an entry
	// rather than 32 a posting.
	text   string
	textAt []int32
	postAt []int32
	post   []int32
	dense  map[int32]*bitmap

	// slots holds one scratch, or nil until it is made, per query that may run at once: a
	// scratch is 6 to 11 bitmaps of the catalog (1.4 MB at a million templates), so more
	// queries than cores wait for one rather than allocate their own.
	slots chan *scratch
}

// entrySet is the entries having one filter value, added in ascending order: a sorted list
// while it is sparse, a bitmap once the list would take more room (past 1/32 of the entries).
type entrySet struct {
	list []int32
	bits []uint64
	n    int
}

// add adds e, above every entry added before; entries is the catalog's size as counted before
// it was read, which rows added since then may pass.
func (s *entrySet) add(e int32, entries int) {
	s.n++
	if s.bits == nil {
		s.list = append(s.list, e)
		if 32*len(s.list) <= entries {
			return
		}
		s.bits = make([]uint64, (max(entries, int(e)+1)+63)/64)
		for _, x := range s.list {
			s.bits[x/64] |= 1 << (x % 64)
		}
		s.list = nil
		return
	}
	for int(e/64) >= len(s.bits) {
		s.bits = append(s.bits, 0)
	}
	s.bits[e/64] |= 1 << (e % 64)
}

func (s *entrySet) has(e int32) bool {
	if s.bits != nil {
		w := int(e / 64)
		return w < len(s.bits) && s.bits[w]>>(e%64)&1 != 0
	}
	_, ok := slices.BinarySearch(s.list, e)
	return ok
}

// word answers the bits of entries 64w..64w+63 of a bitmap set.
func (s *entrySet) word(w int) uint64 {
	if w < len(s.bits) {
		return s.bits[w]
	}
	return 0
}

func (s *entrySet) size() int { return 4*cap(s.list) + 8*len(s.bits) + 64 }

// bitmap holds a lexeme's entries as bits and each one's weight as two more.
type bitmap struct {
	has, lo, hi []uint64
}

func newBitmap(n int) *bitmap {
	w := (n + 63) / 64
	return &bitmap{has: make([]uint64, w), lo: make([]uint64, w), hi: make([]uint64, w)}
}

func (b *bitmap) set(e int32, weight uint8) {
	w, bit := e/64, uint64(1)<<(e%64)
	b.has[w] |= bit
	if weight&1 != 0 {
		b.lo[w] |= bit
	}
	if weight&2 != 0 {
		b.hi[w] |= bit
	}
}

// errIndexTooLarge stops a build over a catalog larger than the bound.
var errIndexTooLarge = errors.New("cache: the catalog has more templates than the index may hold")

// maxSearchWordLen is the longest search word the index answers; longer ones go to the database.
const maxSearchWordLen = 100

// buildIndex reads the catalog of about n templates from src into an index read at t, keeping
// the cards of the first opts.Cards entries, failing with errIndexTooLarge past
// opts.MaxTemplates.
func buildIndex(ctx context.Context, src Lister, t pglisten.Ticket, n int, opts IndexOptions) (*index, error) {
	n = min(n, opts.MaxTemplates)
	ix := &index{at: t, src: src, orders: map[string][]int32{}, ranks: map[string][]int32{}, ids: make([]uuid.UUID, 0, n),
		kept: make([]catalog.TemplateCard, 0, min(n, opts.Cards)), premium: &entrySet{},
		modes: map[string]*entrySet{}, aspects: map[string]*entrySet{}, cats: map[string]*entrySet{}, tags: map[string]*entrySet{},
		textAt: []int32{0}, postAt: []int32{0}, dense: map[int32]*bitmap{}}
	b := &builder{ix: ix, n: n, max: opts.MaxTemplates, aspectLists: map[string][]string{}}
	for _, sort := range catalog.Sorts() {
		if sort != catalog.SortPopular {
			ix.orders[sort], ix.ranks[sort] = slices.Repeat([]int32{-1}, n), make([]int32, 0, n)
		}
	}
	if err := src.Listing(ctx, opts.Cards, b); err != nil {
		return nil, err
	}
	if len(ix.kept) != min(len(ix.ids), opts.Cards) {
		return nil, fmt.Errorf("cache: listing gave %d cards of %d templates", len(ix.kept), len(ix.ids))
	}
	n = len(ix.ids)
	for sort, order := range ix.orders {
		// The order was sized by the count before the read, which may have been larger.
		if len(order) < n || slices.Contains(order[:n], -1) || slices.ContainsFunc(order[n:], func(e int32) bool { return e != -1 }) {
			return nil, fmt.Errorf("cache: the listing's %s places are not 1 to %d", sort, n)
		}
		ix.orders[sort] = order[:n]
	}
	ix.text = b.text.String()
	ix.post = slices.Clip(ix.post)
	ix.slots = make(chan *scratch, runtime.GOMAXPROCS(0))
	for range cap(ix.slots) {
		ix.slots <- nil
	}
	return ix, nil
}

// builder is the catalog.ListingVisitor that fills an index.
type builder struct {
	ix     *index
	n, max int // the catalog's size as counted before reading it, and the bound
	text   strings.Builder
	// Cards share one slice per combination of aspects rather than one each.
	aspectLists map[string][]string
}

// add adds e to the set of value in sets.
func (b *builder) add(sets map[string]*entrySet, value string, e int32) {
	s, ok := sets[value]
	if !ok {
		s = &entrySet{}
		sets[value] = s
	}
	s.add(e, b.n)
}

func (b *builder) Row(r catalog.ListingRow) error {
	ix := b.ix
	e := int32(len(ix.ids)) // #nosec G115 -- bounded by MaxTemplates
	if int(e) >= b.max {
		return errIndexTooLarge
	}
	id, err := uuid.Parse(r.ID)
	if err != nil {
		return fmt.Errorf("cache: listing row %d: %w", e, err)
	}
	ix.ids = append(ix.ids, id)
	if r.IsPremium {
		ix.premium.add(e, b.n)
	}
	b.add(ix.modes, r.PrimaryMode, e)
	for _, a := range r.Aspects {
		b.add(ix.aspects, a, e)
	}
	for _, c := range r.CategoryIDs {
		b.add(ix.cats, strings.ToLower(c), e)
	}
	for _, t := range r.TagIDs {
		b.add(ix.tags, strings.ToLower(t), e)
	}
	for i, sort := range catalog.Sorts() {
		p := r.Places[i]
		if sort == catalog.SortPopular {
			continue // the entries' own order
		}
		order := ix.orders[sort]
		if p < 1 || p > b.max || p <= len(order) && order[p-1] != -1 {
			return fmt.Errorf("cache: listing row %d has %s place %d", e, sort, p)
		}
		for len(order) < p {
			order = append(order, -1)
		}
		order[p-1] = e
		ix.orders[sort], ix.ranks[sort] = order, append(ix.ranks[sort], int32(p-1)) // #nosec G115 -- bounded by MaxTemplates
	}
	return nil
}

func (b *builder) Card(c catalog.TemplateCard) error {
	ix := b.ix
	e := len(ix.kept)
	if e >= len(ix.ids) || !strings.EqualFold(ix.ids[e].String(), c.ContainerID) {
		return fmt.Errorf("cache: listing card %d is not its row's", e)
	}
	key := strings.Join(c.AvailableAspects, ",")
	if shared, ok := b.aspectLists[key]; ok {
		c.AvailableAspects = shared
	} else {
		b.aspectLists[key] = c.AvailableAspects
	}
	ix.kept = append(ix.kept, c)
	return nil
}

func (b *builder) Lexeme(l catalog.ListingLexeme) error {
	ix, n := b.ix, len(b.ix.ids)
	if k := len(ix.textAt); k > 1 && l.Text <= b.text.String()[ix.textAt[k-2]:ix.textAt[k-1]] {
		return fmt.Errorf("cache: listing lexeme %q is not in byte order", l.Text)
	}
	if len(l.Entries) == 0 || len(l.Entries) != len(l.Weights) {
		return fmt.Errorf("cache: listing lexeme %q has no postings", l.Text)
	}
	for i, e := range l.Entries {
		if e < 0 || int(e) >= n || i > 0 && e <= l.Entries[i-1] || l.Weights[i] > 3 {
			return fmt.Errorf("cache: listing lexeme %q has a posting out of order", l.Text)
		}
	}
	b.text.WriteString(l.Text)
	lexeme := int32(len(ix.textAt) - 1)                // #nosec G115 -- a few per entry
	ix.textAt = append(ix.textAt, int32(b.text.Len())) // #nosec G115 -- a few bytes per lexeme
	if 32*len(l.Entries) > 3*n {
		d := newBitmap(n)
		for i, e := range l.Entries {
			d.set(e, l.Weights[i])
		}
		ix.dense[lexeme] = d
	} else {
		for i, e := range l.Entries {
			ix.post = append(ix.post, e<<2|int32(l.Weights[i]))
		}
	}
	ix.postAt = append(ix.postAt, int32(len(ix.post))) // #nosec G115 -- a few dozen per entry
	return nil
}

// lexemes answers how many lexemes the index holds; lexeme(l) answers the l-th.
func (ix *index) lexemes() int { return len(ix.textAt) - 1 }

func (ix *index) lexeme(l int) string { return ix.text[ix.textAt[l]:ix.textAt[l+1]] }

// scratch is a query's state, a bit per entry in each bitmap: which entries pass the
// filters, which match every word so far, their summed weights (bit-sliced: score[j] holds bit
// j of each entry's score; only the bits of matched entries mean anything), and the current
// word's entries and best weights (ge1..ge3: a weight of at least 1, 2, 3). has and ge1..ge3
// are all zero unless held says a word left its bits there; touched lists the bitmap words a
// word of lists set bits in.
type scratch struct {
	passing, matched   []uint64
	score              [][]uint64
	has, ge1, ge2, ge3 []uint64
	held               bool
	touched            []int
}

// match is a query compiled against an index: chosen tells which entries pass.
type match struct {
	ix         *index
	none       bool        // a filter names something no template has
	sets       []*entrySet // an entry passes only in each of them, smallest first
	notPremium bool        // an entry passes only outside ix.premium
	filtered   bool        // there are sets or notPremium: s.passing tells who passes them
	words      int
	planes     int // the score's bits
	s          *scratch
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
	m := &match{ix: ix, words: len(q.Words), planes: bits.Len(uint(catalog.WeightName * len(q.Words)))}
	need := func(sets map[string]*entrySet, value string) {
		if s, ok := sets[value]; ok {
			m.sets = append(m.sets, s)
		} else {
			m.none = true
		}
	}
	if q.IsPremium != nil {
		if *q.IsPremium {
			m.sets = append(m.sets, ix.premium)
		} else {
			m.notPremium = true
		}
	}
	if q.Mode != "" {
		need(ix.modes, q.Mode)
	}
	if q.Aspect != "" {
		need(ix.aspects, q.Aspect)
	}
	if q.CategoryID != "" {
		need(ix.cats, strings.ToLower(q.CategoryID))
	}
	for _, t := range q.TagIDs {
		need(ix.tags, strings.ToLower(t))
	}
	slices.SortFunc(m.sets, func(a, b *entrySet) int { return a.n - b.n })
	m.filtered = len(m.sets) > 0 || m.notPremium
	if m.none || m.words == 0 && !m.filtered {
		return m, true
	}
	m.s = ix.takeScratch(m.planes)
	if m.filtered {
		m.filter()
	}
	if m.words > 0 {
		if m.filtered {
			copy(m.s.matched, m.s.passing)
		} else {
			m.all(m.s.matched)
		}
		for i, w := range q.Words {
			m.matchWord(w, i == 0)
		}
	}
	return m, true
}

// all sets the bit of every entry.
func (m *match) all(b []uint64) {
	for w := range b {
		b[w] = ^uint64(0)
	}
	if rest := len(m.ix.ids) % 64; rest != 0 {
		b[len(b)-1] = 1<<rest - 1
	}
}

// matchWord keeps the entries that have a lexeme starting with w and adds the best weight
// among those lexemes to their score (the first word sets it), 64 entries at a time. A word
// with a bitmap lexeme copies the first one into the word's bitmaps and ORs the others; a word
// of lists only touches the bitmap words its entries fall in (matchLists).
func (m *match) matchWord(w string, first bool) {
	ix, s := m.ix, m.s
	from := sort.Search(ix.lexemes(), func(l int) bool { return ix.lexeme(l) >= w })
	to := from
	for to < ix.lexemes() && strings.HasPrefix(ix.lexeme(to), w) {
		to++
	}
	copied := false
	for l := from; l < to; l++ {
		if ix.postAt[l] != ix.postAt[l+1] {
			continue
		}
		d := ix.dense[int32(l)] // #nosec G115 -- below the lexeme count
		if !copied {
			for i, h := range d.has {
				lo, hi := d.lo[i], d.hi[i]
				s.has[i], s.ge1[i], s.ge2[i], s.ge3[i] = h, lo|hi, hi, lo&hi
			}
			copied, s.held = true, true
			continue
		}
		for i, h := range d.has {
			lo, hi := d.lo[i], d.hi[i]
			s.has[i] |= h
			s.ge1[i] |= lo | hi
			s.ge2[i] |= hi
			s.ge3[i] |= lo & hi
		}
	}
	if !copied {
		m.matchLists(from, to, first)
		return
	}
	for _, p := range ix.post[ix.postAt[from]:ix.postAt[to]] {
		s.setPosting(p)
	}
	m.score(0, len(s.matched), first)
}

// matchLists is matchWord for a word whose lexemes from..to are all lists: it sets their bits,
// scores the bitmap words they touched, keeps no match elsewhere and zeroes what it set.
func (m *match) matchLists(from, to int, first bool) {
	ix, s := m.ix, m.s
	if s.held {
		clear(s.has)
		clear(s.ge1)
		clear(s.ge2)
		clear(s.ge3)
		s.held = false
	}
	s.touched = s.touched[:0]
	for _, p := range ix.post[ix.postAt[from]:ix.postAt[to]] {
		if i := int(p >> 8); s.has[i] == 0 {
			s.touched = append(s.touched, i)
		}
		s.setPosting(p)
	}
	for _, i := range s.touched {
		m.score(i, i+1, first)
		s.has[i] = s.matched[i]
	}
	clear(s.matched)
	for _, i := range s.touched {
		s.matched[i] = s.has[i]
		s.has[i], s.ge1[i], s.ge2[i], s.ge3[i] = 0, 0, 0, 0
	}
}

// setPosting sets a posting's entry in the word's bitmaps.
func (s *scratch) setPosting(p int32) {
	e, weight := p>>2, p&3
	i, bit := e/64, uint64(1)<<(e%64)
	s.has[i] |= bit
	if weight >= 1 {
		s.ge1[i] |= bit
	}
	if weight >= 2 {
		s.ge2[i] |= bit
	}
	if weight == 3 {
		s.ge3[i] |= bit
	}
}

// score keeps the entries of bitmap words from..to that the word has and adds the word's best
// weight, 0 to 3 as two bits, to their score's planes with a carry; the first word sets the
// score instead. A query with words has at least two planes (bits.Len of 3).
func (m *match) score(from, to int, first bool) {
	s := m.s
	matched, has, ge1, ge2, ge3 := s.matched[from:to], s.has[from:to], s.ge1[from:to], s.ge2[from:to], s.ge3[from:to]
	s0, s1, rest := s.score[0][from:to], s.score[1][from:to], s.score[2:m.planes]
	if first {
		for i := range matched {
			matched[i] &= has[i]
			s0[i], s1[i] = ge1[i]^ge2[i]^ge3[i], ge2[i]
		}
		for _, plane := range rest {
			clear(plane[from:to])
		}
		return
	}
	for i := range matched {
		matched[i] &= has[i]
		hi := ge2[i]
		lo := ge1[i] ^ hi ^ ge3[i]
		carry := s0[i] & lo
		s0[i] ^= lo
		next := s1[i]&hi | s1[i]&carry | hi&carry
		s1[i] ^= hi ^ carry
		carry = next
		for j := 0; j < len(rest) && carry != 0; j++ {
			rest[j][from+i], carry = rest[j][from+i]^carry, rest[j][from+i]&carry
		}
	}
}

// takeScratch waits for a slot and answers its scratch, made on first use, with at least
// planes score planes.
func (ix *index) takeScratch(planes int) *scratch {
	s := <-ix.slots
	words := (len(ix.ids) + 63) / 64
	if s == nil {
		s = &scratch{passing: make([]uint64, words), matched: make([]uint64, words), has: make([]uint64, words),
			ge1: make([]uint64, words), ge2: make([]uint64, words), ge3: make([]uint64, words)}
	}
	for len(s.score) < planes {
		s.score = append(s.score, make([]uint64, words))
	}
	return s
}

// release gives the scratch's slot back.
func (m *match) release() {
	if m.s == nil {
		return
	}
	m.ix.slots <- m.s
	m.s = nil
}

// filter sets the bits of the entries that pass the filters: those of the smallest set that is
// a list and pass the others, or, when every set is a bitmap, their AND a word at a time.
func (m *match) filter() {
	passing, premium := m.s.passing, m.ix.premium
	if i := slices.IndexFunc(m.sets, func(s *entrySet) bool { return s.bits == nil }); i >= 0 {
		clear(passing)
		for _, e := range m.sets[i].list {
			if m.passesSets(e) && !(m.notPremium && premium.has(e)) {
				passing[e/64] |= 1 << (e % 64)
			}
		}
		return
	}
	m.all(passing)
	for w := range passing {
		x := passing[w]
		for _, s := range m.sets {
			x &= s.word(w)
		}
		if m.notPremium && premium.bits != nil {
			x &^= premium.word(w)
		}
		passing[w] = x
	}
	if m.notPremium && premium.bits == nil {
		for _, e := range premium.list {
			passing[e/64] &^= 1 << (e % 64)
		}
	}
}

// count answers how many entries pass.
func (m *match) count() int {
	switch {
	case m.none:
		return 0
	case m.words > 0:
		return ones(m.s.matched)
	case m.filtered:
		return ones(m.s.passing)
	}
	return len(m.ix.ids)
}

// ones answers how many bits b has set.
func ones(b []uint64) int {
	n := 0
	for _, x := range b {
		n += bits.OnesCount64(x)
	}
	return n
}

// passesSets reports whether e is in each of the match's sets.
func (m *match) passesSets(e int32) bool {
	for _, s := range m.sets {
		if !s.has(e) {
			return false
		}
	}
	return true
}

// page answers up to limit passing entries after the first offset in the order of sort. A
// relevance page takes the matches of each score, from the highest, in the popular order, and
// answers their number too (counted).
func (m *match) page(sort string, offset, limit int) (entries []int32, total int, counted bool) {
	if m.none {
		return nil, 0, true
	}
	if sort != catalog.SortRelevance || m.words == 0 {
		if chosen := m.chosen(); chosen != nil {
			return m.pageOf(chosen, sort, offset, limit), 0, false
		}
		// Every entry passes: the page is a window of the order.
		m.ix.walk(sort, func(e int32) bool {
			if offset > 0 {
				offset--
			} else {
				entries = append(entries, e)
			}
			return len(entries) < limit
		})
		return entries, 0, false
	}
	// Relevance: the matches of each score, from the highest, in the popular order.
	for sc := catalog.WeightName * m.words; sc >= 0 && len(entries) < limit; sc-- {
		for w, x := range m.s.matched {
			if len(entries) == limit {
				break
			}
			if x == 0 {
				continue
			}
			for j, plane := range m.s.score[:m.planes] {
				if sc>>j&1 != 0 {
					x &= plane[w]
				} else {
					x &^= plane[w]
				}
			}
			for ; x != 0 && len(entries) < limit; x &= x - 1 {
				if offset > 0 {
					offset--
					continue
				}
				entries = append(entries, int32(64*w+bits.TrailingZeros64(x))) // #nosec G115 -- bounded by MaxTemplates
			}
		}
	}
	return entries, ones(m.s.matched), true
}

// chosen answers the bitmap of the entries that pass, nil when every entry does.
func (m *match) chosen() []uint64 {
	switch {
	case m.words > 0:
		return m.s.matched
	case m.filtered:
		return m.s.passing
	}
	return nil
}

// pageOf answers up to limit entries of chosen after the first offset in the order of sort.
// The popular order is the bits' own. For another, when few entries pass, sorting them by
// their place costs less than walking the order until enough passed (about (offset+limit) *
// entries / passing steps, each a bit test at a random place).
func (m *match) pageOf(chosen []uint64, sort string, offset, limit int) []int32 {
	var entries []int32
	ranks, ordered := m.ix.ranks[sort]
	passing := ones(chosen)
	if ordered && float64(passing)*float64(passing)*16 > float64(offset+limit)*float64(len(m.ix.ids)) {
		m.ix.walk(sort, func(e int32) bool {
			if chosen[e/64]>>(e%64)&1 != 0 {
				if offset > 0 {
					offset--
				} else {
					entries = append(entries, e)
				}
			}
			return len(entries) < limit
		})
		return entries
	}
	if ordered {
		entries = make([]int32, 0, passing)
	}
	for w, x := range chosen {
		for ; x != 0; x &= x - 1 {
			entries = append(entries, int32(64*w+bits.TrailingZeros64(x))) // #nosec G115 -- bounded by MaxTemplates
		}
		if !ordered && len(entries) >= offset+limit {
			break
		}
	}
	if ordered {
		slices.SortFunc(entries, func(a, b int32) int { return int(ranks[a] - ranks[b]) })
	}
	return window(entries, offset, limit)
}

// window answers up to limit entries after the first offset, nil when none.
func window(entries []int32, offset, limit int) []int32 {
	if offset >= len(entries) {
		return nil
	}
	return entries[offset:min(len(entries), offset+limit)]
}

// walk calls next with the entries in the order of sort until it answers false.
func (ix *index) walk(sort string, next func(e int32) bool) {
	if order, ok := ix.orders[sort]; ok {
		for _, e := range order {
			if !next(e) {
				return
			}
		}
		return
	}
	for e := range int32(len(ix.ids)) { // #nosec G115 -- bounded by MaxTemplates; the popular order
		if !next(e) {
			return
		}
	}
}

// cards answers the cards of entries: kept ones from memory, the others read by id in one
// query. It answers false when one of those is no longer in the catalog (a change arrived
// since the index was read; the caller then reads the page from the database).
func (ix *index) cards(ctx context.Context, entries []int32) ([]catalog.TemplateCard, bool, error) {
	cards := make([]catalog.TemplateCard, len(entries))
	var ids []string
	for i, e := range entries {
		if int(e) < len(ix.kept) {
			cards[i] = ix.kept[e]
		} else {
			ids = append(ids, ix.ids[e].String())
		}
	}
	if len(ids) == 0 {
		return cards, true, nil
	}
	read, err := ix.src.TemplateCards(ctx, ids)
	if err != nil || len(read) != len(ids) {
		return nil, false, err
	}
	for i, e := range entries {
		if int(e) >= len(ix.kept) {
			cards[i], read = read[0], read[1:]
		}
	}
	return cards, true, nil
}

// size estimates the bytes the index holds.
func (ix *index) size() int {
	n := cardsSize(ix.kept) + 16*len(ix.ids) + 8*len(ix.orders)*len(ix.ids) + ix.premium.size()
	for _, sets := range []map[string]*entrySet{ix.modes, ix.aspects, ix.cats, ix.tags} {
		for v, s := range sets {
			n += len(v) + s.size()
		}
	}
	n += len(ix.text) + 8*len(ix.textAt) + 4*len(ix.post)
	for range ix.dense {
		n += 3 * 8 * ((len(ix.ids) + 63) / 64)
	}
	return n
}
