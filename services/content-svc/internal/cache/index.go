package cache

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// Indexes of catalog.Sorts() in an index's orders.
const (
	orderNewest = iota
	orderPopular
	orderRate
	orderAZ
	nOrders
)

// orderOf answers the index of sort in an index's orders.
func orderOf(sort string) int {
	switch sort {
	case catalog.SortNewest:
		return orderNewest
	case catalog.SortRate:
		return orderRate
	case catalog.SortAZ:
		return orderAZ
	}
	return orderPopular
}

// keys are what a template's orders sort it by, but its name (index.name).
type keys struct {
	created int64 // microseconds, as Postgres keeps them
	use     int64
	rate    float64
}

// index is the catalog's read model: every catalog template (published, not deleted) as the
// listings test, sort and show it, changed in place, one template at a time (apply).
//
// Each template has a slot, a number that stays its own while it is in the catalog; a slot
// freed by a template leaving is given to the next one to enter. Every set below is a set of
// slots, and alive holds the slots in use.
//
//   - Filter values (premium, and each value of each filter: sets, filter): an entrySet each,
//     a sorted list while sparse, a bitmap past 1/32 of the slots.
//   - Orders: for each of catalog.Sorts(), the slots in use in that order (orders, held in
//     blocks: order.go) and each slot's label in it (ranks; meaningless for a free slot). The
//     keys are those of the SQL listing: created_at DESC, use_count DESC, rate_avg DESC, each
//     then id DESC, and name in byte order then id ASC. A label is not a place: labels only
//     increase along the order, with gaps, so a template entering, leaving or moving changes
//     its own label (and, when its neighbours left no room, those of a small window around it:
//     label) rather than the places of every template after it, which at a million templates
//     cost 39 ms a change under the write lock. Invariant: ranks[o][orders[o].at(p)] <
//     ranks[o][orders[o].at(p+1)]; a slot's place is found by binary search on the labels
//     (place).
//   - Slots by template id: slot, a table of slots keyed by ids[s] (table.go).
//   - Search: lexemes by id (their texts one after another in lexBytes, lexeme l's from
//     lexOff[l] to lexOff[l+1]: 4 bytes a lexeme rather than a 16-byte string), their ids in
//     byte order of their text (byText: a text's id by binary search, a prefix's range; while
//     building, before byText is sorted, lexID, a table of lexeme ids keyed by their text), and
//     each one's postings, a posting being
//     slot<<2 | weight. post[l] says where lexeme l's postings are: post[l] >= 0 is its only
//     posting (most lexemes of a large catalog, such as a template's number, are in one
//     template: no list of their own); -1 is none; -2-i is many[i], a list ascending by slot
//     or, once the lexeme is in more than 3/32 of the slots, a bitmap with its weight as two
//     more bits (bits). A lexeme never leaves many, nor a bitmap; bitmaps lists the lexemes
//     that are.
//   - Each slot's lexemes, to take it out: a record each in lexes (records.go), the lexeme
//     ids as uvarints. A record lists every lexeme of the slot that was not a bitmap when it
//     was put (it may list some that became one since); the bitmaps are tested instead (their
//     bit of the slot is cleared, or read, in each), so that the common words of every
//     template are not listed a million times.
//   - Names and cards: every template's, a record each in cards (records.go: the bytes one
//     after another, an offset a slot, rather than a string and an allocation) holding its
//     name first (for the a-z order), then only what the slot does not (its rating count,
//     mockup flag, slug and media, and its aspect list's place among the distinct lists,
//     aspectLists: a catalog has a few dozen); templateCard decodes it. No
//     template has a heap object or a string of its own: what the driver read is copied
//     (lexemes into lexBytes too; a lexeme parsed from a template's list held the whole list).
//
// At the bench's 1,000,001 templates (11.3 lexemes a template, one of them its own number)
// size counts 184.5 MB, 185 bytes a template: 80 of slot arrays (id 16, keys 24, the two
// records' offsets 8, places and labels in the four orders 32), the card's record (the name,
// 31 bytes with the bench's names, then 19.4 with its slugs and no media), the lexemes' record
// (about 4: mostly the template's own number), 8 of slot table, 15 a lexeme, 23 MB of bitmaps
// (ADR 0185, 0195, 0204, 0205).
//
// Changes come in batches (applyAll), applied all or none: a batch that fails half way is
// undone, so the index answers as before it.
//
// An index is not safe for concurrent use: Catalog reads it under a read lock and applies
// changes under the write lock.
type index struct {
	at          catalog.ListingVersion // the catalog version it holds
	ids         []uuid.UUID
	keys        []keys
	cards       records
	aspectLists [][]string     // the cards' distinct aspect lists, the empty one first
	aspectIDs   map[string]int // each one's place in aspectLists, by its aspects joined by commas
	lexes       records
	alive       []uint64
	n           int // slots in use
	free        []int32
	slot        table
	seed        maphash.Seed

	premium *entrySet
	sets    [nFilters]map[string]*entrySet // each filter's sets by value (filter.key)

	orders [nOrders]order
	ranks  [nOrders][]int32
	// built are the orders' slots as the first read adds them, sorted into orders by finish.
	built [nOrders][]int32

	lexID    table
	lexOff   []uint32
	lexBytes []byte
	byText   []int32
	post     []int32
	many     []postings
	bitmaps  []int32

	building bool // rows are added in bulk and finish orders and encodings once
}

// newIndex answers an empty index, in bulk mode until finish.
func newIndex() *index {
	ix := &index{seed: maphash.MakeSeed(), lexes: newRecords(false), cards: newRecords(true),
		aspectLists: [][]string{{}}, aspectIDs: map[string]int{"": 0}, premium: &entrySet{}, building: true}
	for f := range ix.sets {
		ix.sets[f] = map[string]*entrySet{}
	}
	return ix
}

// reserve makes room for n templates read in bulk, so that the slots' arrays do not grow (each
// growth holds the old array beside the new one until it is copied) while the catalog is read.
func (ix *index) reserve(n int) {
	ix.ids, ix.keys = make([]uuid.UUID, 0, n), make([]keys, 0, n)
	ix.cards.at, ix.lexes.at = make([]uint32, 0, n), make([]uint32, 0, n)
	ix.alive = make([]uint64, 0, (n+63)/64)
	for o := range nOrders {
		ix.built[o], ix.ranks[o] = make([]int32, 0, n), make([]int32, 0, n)
	}
}

// room answers how many words a bitmap made now has room for: those of every slot reserved
// while the catalog is read (so that it does not grow a word at a time), else of the slots.
func (ix *index) room() int {
	if ix.building {
		return (cap(ix.ids) + 63) / 64
	}
	return ix.words()
}

// slots answers how many slots the index has (in use or free).
func (ix *index) slots() int { return len(ix.ids) }

// words answers how many 64-slot words a bitmap of the slots has.
func (ix *index) words() int { return (len(ix.ids) + 63) / 64 }

// finish ends bulk mode: it sorts the orders, sorts the lexemes and makes dense sets and
// postings bitmaps.
func (ix *index) finish() {
	for o := range nOrders {
		slices.SortFunc(ix.built[o], func(a, b int32) int { return ix.compare(o, a, b) })
		ix.orders[o], ix.built[o] = newOrder(ix.built[o]), nil
		ix.spread(o, 0, ix.orders[o].len()-1)
	}
	ix.byText = make([]int32, len(ix.post))
	for l := range ix.byText {
		ix.byText[l] = int32(l) // #nosec G115 -- bounded by the lexemes
	}
	slices.SortFunc(ix.byText, func(a, b int32) int { return strings.Compare(ix.lexText(a), ix.lexText(b)) })
	ix.building, ix.lexID = false, table{}
	for _, sets := range ix.sets {
		for _, s := range sets {
			s.densify(ix)
		}
	}
	ix.premium.densify(ix)
	for l := range ix.post {
		ix.densifyLexeme(int32(l)) // #nosec G115 -- bounded by the lexemes
	}
}

// compare orders slots a and b in order o.
func (ix *index) compare(o int, a, b int32) int {
	ka, kb := &ix.keys[a], &ix.keys[b]
	var c int
	switch o {
	case orderNewest:
		c = cmp.Compare(kb.created, ka.created)
	case orderPopular:
		c = cmp.Compare(kb.use, ka.use)
	case orderRate:
		c = cmp.Compare(kb.rate, ka.rate)
	default:
		if c = strings.Compare(ix.name(a), ix.name(b)); c != 0 {
			return c
		}
		return bytes.Compare(ix.ids[a][:], ix.ids[b][:])
	}
	if c != 0 {
		return c
	}
	return bytes.Compare(ix.ids[b][:], ix.ids[a][:])
}

// apply makes r the index's state of its template: added, replaced, or (not Live) taken out.
func (ix *index) apply(r catalog.ListingRow) error {
	id, err := uuid.Parse(r.ID)
	if err != nil {
		return fmt.Errorf("cache: listing row: %w", err)
	}
	s, had := ix.slotOf(id)
	if had {
		ix.takeOut(s, r.Live)
	}
	if !r.Live {
		return nil
	}
	if !had {
		s = ix.newSlot(id)
	}
	ix.put(s, r, had)
	return nil
}

// errBroken says that a batch failed and the index could not be put back as it was: it must
// not answer.
var errBroken = errors.New("cache: the catalog index could not be put back after a failed change")

// applyAll applies rows in order, all or none. Before each row it takes the template's state
// as the index holds it (prior); when a row fails (an error or a panic, either a bug) it puts
// the templates back as they were, the latest first, and checks the orders and counts. It
// answers the failure, wrapping errBroken when the index could not be put back.
func (ix *index) applyAll(rows []catalog.ListingRow) error {
	undo := make([]catalog.ListingRow, 0, len(rows))
	err := safely(func() error {
		for _, r := range rows {
			p, err := ix.prior(r.ID)
			if err != nil {
				return err
			}
			undo = append(undo, p)
			if err := ix.apply(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return nil
	}
	if back := safely(func() error {
		for i := len(undo) - 1; i >= 0; i-- {
			if err := ix.apply(undo[i]); err != nil {
				return err
			}
		}
		return ix.check()
	}); back != nil {
		return fmt.Errorf("%w: %w; putting it back: %w", errBroken, err, back)
	}
	return err
}

// prior answers the template id as the index holds it, its card too: a row that puts it back as
// it is (not Live when it is not in the catalog).
func (ix *index) prior(id string) (catalog.ListingRow, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return catalog.ListingRow{}, fmt.Errorf("cache: listing row: %w", err)
	}
	s, ok := ix.slotOf(u)
	if !ok {
		return catalog.ListingRow{ID: id}, nil
	}
	r := catalog.ListingRow{ID: id, Live: true, CreatedAt: time.UnixMicro(ix.keys[s].created), Card: ix.templateCard(s)}
	for f := range nFilters {
		f.readBack(&r, ix.sets[f], s)
	}
	for l := range ix.lexesOf(s) {
		if ix.bitsOf(l) == nil {
			r.Lexemes = append(r.Lexemes, catalog.ListingLexeme{Text: ix.lexText(l), Weight: ix.weight(l, s)})
		}
	}
	for _, l := range ix.bitmaps {
		if ix.bitsOf(l).holds(s) {
			r.Lexemes = append(r.Lexemes, catalog.ListingLexeme{Text: ix.lexText(l), Weight: ix.weight(l, s)})
		}
	}
	return r, nil
}

// holds reports whether the index holds r as apply would make it: in the catalog or not, and
// everything a listing tests, sorts by and shows of it. A reload in place (Catalog.reconcile)
// applies only the templates that it does not. It reads the index only and allocates nothing
// (a million calls at a reload), so it may run beside listings without the write lock.
func (ix *index) holds(r catalog.ListingRow) (bool, error) {
	id, err := uuid.Parse(r.ID)
	if err != nil {
		return false, fmt.Errorf("cache: listing row: %w", err)
	}
	s, ok := ix.slotOf(id)
	if !ok || !r.Live {
		return ok == r.Live, nil
	}
	for f := range nFilters {
		if !ix.inExactly(f, f.values(&r), s) {
			return false, nil
		}
	}
	k, c := ix.keys[s], &r.Card
	return k.created == r.CreatedAt.UnixMicro() && k.use == c.UseCount && k.rate == c.RateAvg &&
		ix.premium.has(s) == c.IsPremium && ix.postedExactly(r.Lexemes, s) && ix.holdsCard(c, s), nil
}

// inExactly reports whether slot s is in filter f's sets of values (by their keys, as put
// adds it) and in no other of its sets.
func (ix *index) inExactly(f filter, values []string, s int32) bool {
	distinct := 0
	for i, v := range values {
		if !slices.ContainsFunc(values[:i], func(u string) bool { return f.key(u) == f.key(v) }) {
			distinct++
		}
	}
	in := 0
	for v, set := range ix.sets[f] {
		if set.has(s) {
			if !slices.ContainsFunc(values, func(u string) bool { return f.key(u) == v }) {
				return false
			}
			in++
		}
	}
	return in == distinct
}

// postedExactly reports whether slot s is posted in each of lexemes with its weight (as put
// posts it) and in no other lexeme.
func (ix *index) postedExactly(lexemes []catalog.ListingLexeme, s int32) bool {
	for _, l := range lexemes {
		id, _, ok := ix.lexemeOf(l.Text)
		if !ok {
			return false
		}
		if w, ok := ix.posting(id, s); !ok || w != l.Weight&3 {
			return false
		}
	}
	posted := 0
	for l := range ix.lexesOf(s) {
		if ix.bitsOf(l) == nil { // one that became a bitmap since is counted below
			posted++
		}
	}
	for _, l := range ix.bitmaps {
		if ix.bitsOf(l).holds(s) {
			posted++
		}
	}
	return posted == len(lexemes)
}

// holdsCard reports whether slot s's card record is that of card c (appendCard), registering
// no aspect list: a list not registered while there is room for it is in no record.
func (ix *index) holdsCard(c *catalog.TemplateCard, s int32) bool {
	var joined [64]byte
	key := joinAspects(joined[:0], c.AvailableAspects)
	list, ok, room := ix.aspectList(key)
	if !ok && room {
		return false
	}
	var card [128]byte
	return bytes.Equal(encodeCard(card[:0], c, key, list, ok), ix.cards.of(s))
}

// weight answers slot s's weight in lexeme l's postings (0 when it is not posted).
func (ix *index) weight(l, s int32) uint8 {
	w, _ := ix.posting(l, s)
	return w
}

// posting answers slot s's weight in lexeme l's postings, and whether it is posted there.
func (ix *index) posting(l, s int32) (uint8, bool) {
	switch p := ix.post[l]; {
	case p == -1:
		return 0, false
	case p >= 0:
		if p>>2 != s {
			return 0, false
		}
		return uint8(p & 3), true // #nosec G115 -- two bits
	}
	if d := ix.bitsOf(l); d != nil {
		w, bit := int(s/64), uint64(1)<<(s%64)
		var weight uint8
		if w < len(d.lo) && d.lo[w]&bit != 0 {
			weight |= 1
		}
		if w < len(d.hi) && d.hi[w]&bit != 0 {
			weight |= 2
		}
		return weight, d.holds(s)
	}
	post := ix.listOf(l)
	if at, ok := slices.BinarySearchFunc(post, s, func(p, s int32) int { return cmp.Compare(p>>2, s) }); ok {
		return uint8(post[at] & 3), true // #nosec G115 -- two bits
	}
	return 0, false
}

// check verifies the counts and orders: the slots in use, the slot map and each order agree,
// and each order is sorted by its keys and its labels. It reads every slot (some 50 ms at a
// million templates), so it runs only after a failed batch was put back.
func (ix *index) check() error {
	if ones(ix.alive) != ix.n || ix.slot.n != ix.n {
		return fmt.Errorf("cache: %d slots in use, %d alive, %d mapped", ix.n, ones(ix.alive), ix.slot.n)
	}
	for o := range nOrders {
		order, ranks := &ix.orders[o], ix.ranks[o]
		if order.len() != ix.n {
			return fmt.Errorf("cache: order %d holds %d of %d slots", o, order.len(), ix.n)
		}
		prev := int32(-1)
		for p, s := range order.from(0) {
			if ix.alive[s/64]>>(s%64)&1 == 0 || p > 0 && (ranks[prev] >= ranks[s] || ix.compare(o, prev, s) >= 0) {
				return fmt.Errorf("cache: order %d is out of order at place %d", o, p)
			}
			prev = s
		}
	}
	return nil
}

// newSlot answers a free slot, or a new one, for id.
func (ix *index) newSlot(id uuid.UUID) int32 {
	var s int32
	if n := len(ix.free); n > 0 {
		s, ix.free = ix.free[n-1], ix.free[:n-1]
		ix.ids[s] = id
	} else {
		s = int32(len(ix.ids)) // #nosec G115 -- bounded by MaxTemplates
		ix.ids = append(ix.ids, id)
		ix.keys = append(ix.keys, keys{})
		ix.cards.at, ix.lexes.at = append(ix.cards.at, 0), append(ix.lexes.at, 0)
		for o := range nOrders {
			ix.ranks[o] = append(ix.ranks[o], -1)
		}
		if ix.words() > len(ix.alive) {
			ix.alive = append(ix.alive, 0)
		}
	}
	ix.slot.add(ix, ix.idHash(id), s, slotHash)
	return s
}

// takeOut takes slot s out of every set, postings list and order; unless staying (its
// template is put back at once), the slot is freed.
func (ix *index) takeOut(s int32, staying bool) {
	ix.premium.remove(s)
	for _, sets := range ix.sets {
		for _, set := range sets {
			set.remove(s)
		}
	}
	for l := range ix.lexesOf(s) {
		ix.removePosting(l, s)
	}
	for _, l := range ix.bitmaps {
		ix.bitsOf(l).clear(s)
	}
	if !staying {
		// A template put back at once keeps its places until put moves it, and its records
		// until put replaces them (a use counted keeps both where they are).
		for o := range nOrders {
			if p, ok := ix.place(o, s); ok {
				ix.orders[o].remove(p)
			}
		}
	}
	if ix.alive[s/64]>>(s%64)&1 != 0 {
		ix.alive[s/64] &^= 1 << (s % 64)
		ix.n--
	}
	if !staying {
		ix.slot.remove(ix, slotHash(ix, s), s, slotHash)
		ix.cards.drop(s, ix.building)
		ix.lexes.drop(s, ix.building)
		ix.free = append(ix.free, s)
	}
}

// move moves slot s, whose keys changed, from its place in order o to its new place: a use
// counted moves a template a few places.
func (ix *index) move(o int, s int32) {
	order := &ix.orders[o]
	p, ok := ix.place(o, s)
	if !ok {
		panic(fmt.Sprintf("cache: slot %d is not in order %d", s, o))
	}
	order.remove(p)
	q := order.search(func(x int32) bool { return ix.compare(o, x, s) > 0 })
	order.insert(q, s)
	if q != p {
		ix.label(o, q)
	}
}

// place answers the place of slot s in order o, found by its label, and whether s is there.
func (ix *index) place(o int, s int32) (int, bool) {
	order, ranks := &ix.orders[o], ix.ranks[o]
	p := order.search(func(x int32) bool { return ranks[x] >= ranks[s] })
	return p, p < order.len() && order.at(p) == s
}

// label gives the slot at place q of order o, just placed there, a label between its
// neighbours': it spreads the labels of the window of places q-k..q+k evenly between the
// labels just outside it (or the ends of int32), for the smallest k = 1, 2, 4, ... whose
// window has room: w slots need about max(2, √w) labels each, so a wider window must be
// sparser, and spreading one leaves every narrower window inside it room to spare (as in
// list labelling: many changes at one place, such as templates made the most used one after
// another, relabel ever wider windows ever more rarely, not the whole order each time). Most
// changes relabel three slots.
func (ix *index) label(o, q int) {
	order, ranks := &ix.orders[o], ix.ranks[o]
	last := order.len() - 1
	for k := 1; ; k *= 2 {
		lo, hi := max(q-k, 0), min(q+k, last)
		below, above := int64(math.MinInt32), int64(math.MaxInt32)
		if lo > 0 {
			below = int64(ranks[order.at(lo-1)])
		}
		if hi < last {
			above = int64(ranks[order.at(hi+1)])
		}
		w := int64(hi - lo + 1)
		if above-below >= (w+1)*max(2, int64(math.Sqrt(float64(w)))) || lo == 0 && hi == last {
			ix.spread(o, lo, hi)
			return
		}
	}
}

// spread gives the slots at places lo..hi of order o labels evenly spaced between those just
// outside them (or the ends of int32).
func (ix *index) spread(o, lo, hi int) {
	order, ranks := &ix.orders[o], ix.ranks[o]
	below, above := int64(math.MinInt32), int64(math.MaxInt32)
	if lo > 0 {
		below = int64(ranks[order.at(lo-1)])
	}
	if hi < order.len()-1 {
		above = int64(ranks[order.at(hi+1)])
	}
	n := int64(hi - lo + 2)
	for p, s := range order.from(lo) {
		if p > hi {
			break
		}
		ranks[s] = int32(below + (above-below)*int64(p-lo+1)/n) // #nosec G115 -- between below and above
	}
}

// put puts r's template in slot s, which is in no set or postings list, and in the orders
// only when placed (then it is moved to its new places).
func (ix *index) put(s int32, r catalog.ListingRow, placed bool) {
	ix.keys[s] = keys{created: r.CreatedAt.UnixMicro(), use: r.Card.UseCount, rate: r.Card.RateAvg}
	// The card goes first: its record holds the name the a-z order compares.
	var card [128]byte
	ix.cards.set(s, ix.appendCard(card[:0], &r.Card), ix.building)
	if r.Card.IsPremium {
		ix.premium.add(s, ix)
	}
	for f := range nFilters {
		for _, v := range f.values(&r) {
			ix.addTo(ix.sets[f], f.key(v), s)
		}
	}
	// Its lexemes are listed before any is posted, so that taking the slot out after a failure
	// here takes out every posting it has; a bitmap is not listed (every bitmap is cleared).
	var lexes [64]int32
	var rec [128]byte
	ids, b := lexes[:0], rec[:0]
	for _, l := range r.Lexemes {
		id := ix.lexeme(l.Text)
		ids = append(ids, id)
		if ix.bitsOf(id) == nil {
			b = binary.AppendUvarint(b, uint64(id)) // #nosec G115 -- a lexeme id
		}
	}
	ix.lexes.set(s, b, ix.building)
	for i, l := range r.Lexemes {
		ix.addPosting(ids[i], s, l.Weight&3)
	}
	for o := range nOrders {
		if ix.building {
			ix.built[o] = append(ix.built[o], s)
			continue
		}
		if placed {
			ix.move(o, s)
			continue
		}
		q := ix.orders[o].search(func(x int32) bool { return ix.compare(o, x, s) > 0 })
		ix.orders[o].insert(q, s)
		ix.label(o, q)
	}
	if ix.alive[s/64]>>(s%64)&1 == 0 {
		ix.alive[s/64] |= 1 << (s % 64)
		ix.n++
	}
}

// addTo adds s to the set of value in sets.
func (ix *index) addTo(sets map[string]*entrySet, value string, s int32) {
	set, ok := sets[value]
	if !ok {
		set = &entrySet{}
		sets[value] = set
	}
	set.add(s, ix)
}

// lexeme answers the id of the lexeme text, made when new. The id is named last (in lexID
// while building, else in byText): a failure half way leaves a lexeme without postings, which
// matches nothing.
func (ix *index) lexeme(text string) int32 {
	id, at, ok := ix.lexemeOf(text)
	if ok {
		return id
	}
	id = int32(len(ix.post)) // #nosec G115 -- a few per template
	if len(ix.lexOff) == 0 {
		ix.lexOff = append(ix.lexOff, 0)
	}
	ix.lexBytes = append(ix.lexBytes, text...)
	ix.lexOff = append(ix.lexOff, uint32(len(ix.lexBytes))) // #nosec G115 -- lexemes are short and few
	ix.post = append(ix.post, -1)
	if ix.building {
		ix.lexID.add(ix, maphash.String(ix.seed, text), id, lexHash)
	} else {
		ix.byText = slices.Insert(ix.byText, at, id)
	}
	return id
}

// lexemeOf answers the id of the lexeme text and whether there is one, and else where its id
// goes in byText. While building, byText is not sorted yet and lexID finds it; finish sorts
// byText and drops lexID, and a binary search of byText finds it after (8 MB less at a million
// lexemes: ADR 0200).
func (ix *index) lexemeOf(text string) (id int32, at int, ok bool) {
	if ix.building {
		id, ok = find(&ix.lexID, ix, maphash.String(ix.seed, text), text, isLexeme)
		return id, 0, ok
	}
	at, ok = slices.BinarySearchFunc(ix.byText, text, func(l int32, t string) int { return strings.Compare(ix.lexText(l), t) })
	if ok {
		return ix.byText[at], at, true
	}
	return 0, at, false
}

// lexText answers lexeme l's text. It is a view of lexBytes, whose bytes are never written
// again (an append past its capacity copies them; the view keeps the old ones).
func (ix *index) lexText(l int32) string {
	from, to := ix.lexOff[l], ix.lexOff[l+1]
	if from == to {
		return ""
	}
	return unsafe.String(&ix.lexBytes[from], to-from) // #nosec G103 -- see above
}

// isLexeme reports whether lexeme l's text is text.
func isLexeme(ix *index, l int32, text string) bool { return ix.lexText(l) == text }

// lexHash answers the hash of lexeme l's text.
func lexHash(ix *index, l int32) uint64 { return maphash.String(ix.seed, ix.lexText(l)) }

// slotOf answers template id's slot, and whether it has one.
func (ix *index) slotOf(id uuid.UUID) (int32, bool) {
	return find(&ix.slot, ix, ix.idHash(id), id, isSlot)
}

// idHash answers the hash of a template id.
func (ix *index) idHash(id uuid.UUID) uint64 { return maphash.Bytes(ix.seed, id[:]) }

// isSlot reports whether slot s holds template id.
func isSlot(ix *index, s int32, id uuid.UUID) bool { return ix.ids[s] == id }

// slotHash answers the hash of slot s's template id.
func slotHash(ix *index, s int32) uint64 { return maphash.Bytes(ix.seed, ix.ids[s][:]) }

// postings are the postings of a lexeme in more than one slot (ever): a list ascending by slot,
// or a bitmap once it is in more than 3/32 of the slots (then list is nil).
type postings struct {
	list []int32
	bits *bitmap
}

// listOf answers lexeme l's postings when they are a list (one posting is a list of one), nil
// when it has none or a bitmap. The caller does not change it.
func (ix *index) listOf(l int32) []int32 {
	switch p := ix.post[l]; {
	case p >= 0:
		return ix.post[l : l+1 : l+1]
	case p == -1:
		return nil
	default:
		return ix.many[-2-p].list
	}
}

// bitsOf answers lexeme l's bitmap, nil while its postings are not one.
func (ix *index) bitsOf(l int32) *bitmap {
	if p := ix.post[l]; p <= -2 {
		return ix.many[-2-p].bits
	}
	return nil
}

// buildDense is how many postings a lexeme's list needs, while the catalog is read, before it
// may become a bitmap: the share of the slots read so far says little about the first ones.
const buildDense = 4096

// addPosting adds slot s, in none of its postings, with weight to lexeme l's postings.
func (ix *index) addPosting(l, s int32, weight uint8) {
	p := s<<2 | int32(weight)
	switch q := ix.post[l]; {
	case q == -1:
		ix.post[l] = p
		return
	case q >= 0:
		list := []int32{q, p}
		if q>>2 > s {
			list[0], list[1] = p, q
		}
		ix.many = append(ix.many, postings{list: list})
		ix.post[l] = -1 - int32(len(ix.many)) // #nosec G115 -- bounded by the lexemes
		return
	}
	m := &ix.many[-2-ix.post[l]]
	if m.bits != nil {
		m.bits.set(s, weight)
		return
	}
	if n := len(m.list); n == 0 || m.list[n-1]>>2 < s {
		m.list = append(m.list, p)
	} else {
		at, _ := slices.BinarySearchFunc(m.list, s, func(p, s int32) int { return cmp.Compare(p>>2, s) })
		m.list = slices.Insert(m.list, at, p)
	}
	if !ix.building || len(m.list) >= buildDense {
		ix.densifyLexeme(l)
	}
}

// removePosting takes slot s out of lexeme l's postings.
func (ix *index) removePosting(l, s int32) {
	switch q := ix.post[l]; {
	case q == -1:
		return
	case q >= 0:
		if q>>2 == s {
			ix.post[l] = -1
		}
		return
	}
	m := &ix.many[-2-ix.post[l]]
	if m.bits != nil {
		m.bits.clear(s)
		return
	}
	if at, ok := slices.BinarySearchFunc(m.list, s, func(p, s int32) int { return cmp.Compare(p>>2, s) }); ok {
		m.list = slices.Delete(m.list, at, at+1)
	}
}

// densifyLexeme makes lexeme l's postings a bitmap once they are in more than 3/32 of the
// slots: 3 bits a slot rather than 32 a posting.
func (ix *index) densifyLexeme(l int32) {
	q := ix.post[l]
	if q > -2 {
		return
	}
	m := &ix.many[-2-q]
	if m.bits != nil || 32*len(m.list) <= 3*ix.slots() {
		return
	}
	room := ix.room()
	d := &bitmap{has: make([]uint64, 0, room), lo: make([]uint64, 0, room), hi: make([]uint64, 0, room)}
	for _, p := range m.list {
		d.set(p>>2, uint8(p&3)) // #nosec G115 -- two bits
	}
	m.bits, m.list = d, nil
	ix.bitmaps = append(ix.bitmaps, l)
}

// name answers slot s's name, a view of its card's record (appendCard), whose bytes are never
// written again (records).
func (ix *index) name(s int32) string {
	rec := ix.cards.of(s)
	n, k := binary.Uvarint(rec)
	if n == 0 {
		return ""
	}
	return unsafe.String(&rec[k], n) // #nosec G103 -- see above
}

// lexesOf answers the lexemes of slot s's record.
func (ix *index) lexesOf(s int32) iter.Seq[int32] {
	return func(yield func(int32) bool) {
		for rec := ix.lexes.of(s); len(rec) > 0; {
			l, k := binary.Uvarint(rec)
			if rec = rec[k:]; !yield(int32(l)) { // #nosec G115 -- a lexeme id
				return
			}
		}
	}
}

// maxAspectLists bounds the distinct aspect lists the cards share (a catalog has a few dozen);
// a card with another list holds it itself.
const maxAspectLists = 1024

// appendCard appends to b the record of card c: what the slot does not hold (the card's id,
// premium, mode, rating and uses are the slot's), as uvarints and strings (a uvarint length
// and bytes): the name first (name reads it), its rating count, its aspect list's place in
// aspectLists (past the bound, maxAspectLists and the list itself, joined by commas) and
// mockup flag, its slug, image, demo and mini demo.
func (ix *index) appendCard(b []byte, c *catalog.TemplateCard) []byte {
	var joined [64]byte
	key := joinAspects(joined[:0], c.AvailableAspects)
	list, ok, room := ix.aspectList(key)
	if !ok && room {
		list, ok = len(ix.aspectLists), true
		ix.aspectIDs[string(key)] = list
		ix.aspectLists = append(ix.aspectLists, c.AvailableAspects)
	}
	return encodeCard(b, c, key, list, ok)
}

// aspectList answers the place in aspectLists of the aspect list key (joinAspects), whether
// it has one, and whether there is room to give it one (a card holds its list itself past it).
func (ix *index) aspectList(key []byte) (list int, ok, room bool) {
	list, ok = ix.aspectIDs[string(key)]
	return list, ok, len(ix.aspectLists) < maxAspectLists
}

// joinAspects appends aspects joined by commas to b: an aspect list's key.
func joinAspects(b []byte, aspects []string) []byte {
	for i, a := range aspects {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, a...)
	}
	return b
}

// encodeCard appends the record of card c to b (appendCard), its aspect list (key) being list
// in aspectLists when shared, else held in the record.
func encodeCard(b []byte, c *catalog.TemplateCard, key []byte, list int, shared bool) []byte {
	if !shared {
		list = maxAspectLists
	}
	mockup := 0
	if c.IsMockup {
		mockup = 1
	}
	b = appendText(b, c.Name)
	b = binary.AppendUvarint(b, uint64(c.RateCount))    // #nosec G115 -- a count (a negative one reads back)
	b = binary.AppendUvarint(b, uint64(list<<1|mockup)) // #nosec G115 -- at most maxAspectLists
	if list == maxAspectLists {
		b = appendText(b, key)
	}
	for _, text := range []string{c.Slug, c.Image, c.Demo, c.MiniDemo} {
		b = appendText(b, text)
	}
	return b
}

// appendText appends text's length (uvarint) and bytes to b.
func appendText[T string | []byte](b []byte, text T) []byte {
	return append(binary.AppendUvarint(b, uint64(len(text))), text...)
}

// templateCards answers the cards of slots, in their order (an empty list for none).
func (ix *index) templateCards(slots []int32) []catalog.TemplateCard {
	cards := make([]catalog.TemplateCard, len(slots))
	for i, s := range slots {
		cards[i] = ix.templateCard(s)
	}
	return cards
}

// templateCard answers slot s's card, decoding its record (appendCard); its strings share one
// allocation rather than view the index's bytes.
func (ix *index) templateCard(s int32) catalog.TemplateCard {
	rec, k := ix.cards.of(s), ix.keys[s]
	text, at := string(rec), 0
	uvarint := func() uint64 {
		n, w := binary.Uvarint(rec[at:])
		at += w
		return n
	}
	next := func() string {
		n := int(uvarint()) // #nosec G115 -- a string's length
		at += n
		return text[at-n : at]
	}
	name := next()
	rateCount, list := uvarint(), uvarint()
	var aspects []string
	if list>>1 < maxAspectLists {
		aspects = ix.aspectLists[list>>1]
	} else {
		aspects = strings.Split(next(), ",")
	}
	var mode string
	for v, set := range ix.sets[filterMode] {
		if set.has(s) {
			mode = v
			break
		}
	}
	return catalog.TemplateCard{ContainerID: ix.ids[s].String(), Slug: next(), Name: name, Image: next(),
		Demo: next(), MiniDemo: next(), IsPremium: ix.premium.has(s), IsMockup: list&1 != 0, PrimaryMode: mode,
		RateAvg: k.rate, RateCount: int(rateCount), UseCount: k.use, AvailableAspects: aspects} // #nosec G115 -- appended from an int
}

// entrySet is the slots having one filter value: a sorted list while it is sparse, a bitmap
// once the list would take more room (past 1/32 of the slots). n counts its slots.
type entrySet struct {
	list []int32
	bits []uint64
	n    int
}

// add adds s (kept sparse while ix is built in bulk).
func (set *entrySet) add(s int32, ix *index) {
	if set.bits != nil {
		for int(s/64) >= len(set.bits) {
			set.bits = append(set.bits, 0)
		}
		if set.bits[s/64]>>(s%64)&1 == 0 {
			set.bits[s/64] |= 1 << (s % 64)
			set.n++
		}
		return
	}
	if n := len(set.list); n == 0 || set.list[n-1] < s {
		set.list = append(set.list, s)
	} else if at, ok := slices.BinarySearch(set.list, s); !ok {
		set.list = slices.Insert(set.list, at, s)
	} else {
		return
	}
	set.n++
	if !ix.building || len(set.list) >= buildDense {
		set.densify(ix)
	}
}

// densify makes the set a bitmap when its list takes more room than one of ix's slots would,
// with room for the slots reserved.
func (set *entrySet) densify(ix *index) {
	slots := ix.slots()
	if set.bits != nil || 32*len(set.list) <= slots {
		return
	}
	set.bits = make([]uint64, (slots+63)/64, ix.room())
	for _, x := range set.list {
		set.bits[x/64] |= 1 << (x % 64)
	}
	set.list = nil
}

func (set *entrySet) remove(s int32) {
	if set.bits != nil {
		if w := int(s / 64); w < len(set.bits) && set.bits[w]>>(s%64)&1 != 0 {
			set.bits[w] &^= 1 << (s % 64)
			set.n--
		}
		return
	}
	if at, ok := slices.BinarySearch(set.list, s); ok {
		set.list = slices.Delete(set.list, at, at+1)
		set.n--
	}
}

func (set *entrySet) has(s int32) bool {
	if set.bits != nil {
		w := int(s / 64)
		return w < len(set.bits) && set.bits[w]>>(s%64)&1 != 0
	}
	_, ok := slices.BinarySearch(set.list, s)
	return ok
}

// word answers the bits of slots 64w..64w+63 of a bitmap set.
func (set *entrySet) word(w int) uint64 {
	if w < len(set.bits) {
		return set.bits[w]
	}
	return 0
}

func (set *entrySet) size() int { return 4*cap(set.list) + 8*len(set.bits) + 64 }

// bitmap holds a dense lexeme's slots as bits (has) and each one's weight as two more (lo,
// hi); lo and hi are zero outside has. It is as long as its highest slot needs.
type bitmap struct {
	has, lo, hi []uint64
}

func (b *bitmap) set(s int32, weight uint8) {
	w, bit := int(s/64), uint64(1)<<(s%64)
	for w >= len(b.has) {
		b.has, b.lo, b.hi = append(b.has, 0), append(b.lo, 0), append(b.hi, 0)
	}
	b.has[w] |= bit
	b.lo[w] &^= bit
	b.hi[w] &^= bit
	if weight&1 != 0 {
		b.lo[w] |= bit
	}
	if weight&2 != 0 {
		b.hi[w] |= bit
	}
}

// holds reports whether s is among the bitmap's slots.
func (b *bitmap) holds(s int32) bool {
	w := int(s / 64)
	return w < len(b.has) && b.has[w]>>(s%64)&1 != 0
}

func (b *bitmap) clear(s int32) {
	if w, bit := int(s/64), uint64(1)<<(s%64); w < len(b.has) {
		b.has[w] &^= bit
		b.lo[w] &^= bit
		b.hi[w] &^= bit
	}
}

// scratch is a query's state, a bit per slot in each bitmap: which slots pass the filters,
// which match every word so far, their summed weights (bit-sliced: score[j] holds bit j of
// each slot's score; only the bits of matched slots mean anything), the current word's slots
// and best weights (ge1..ge3: a weight of at least 1, 2, 3), and the slots of one score
// (level). has and ge1..ge3 are all zero unless held says a word left its bits there; touched
// lists the bitmap words a word of lists set bits in.
type scratch struct {
	passing, matched, level []uint64
	score                   [][]uint64
	has, ge1, ge2, ge3      []uint64
	held                    bool
	touched                 []int
}

// match is a query compiled against an index: chosen tells which slots pass.
type match struct {
	ix         *index
	none       bool        // a filter names something no template has
	sets       []*entrySet // a slot passes only in each of them, smallest first
	notPremium bool        // a slot passes only outside ix.premium
	filtered   bool        // there are sets or notPremium: s.passing tells who passes them
	words      int
	planes     int // the score's bits
	s          *scratch
}

// compile answers q as a match, working in s when it needs a scratch (a nil s, or one sized for
// fewer slots or planes, is made anew); release answers the scratch to keep for the next. A
// search word matches the lexemes it prefixes.
func (ix *index) compile(q catalog.TemplateQuery, s *scratch) *match {
	m := &match{ix: ix, words: len(q.Words), planes: bits.Len(uint(catalog.WeightName * len(q.Words))), s: s}
	need := func(sets map[string]*entrySet, value string) {
		if s, ok := sets[value]; ok && s.n > 0 {
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
	for f := range nFilters {
		for _, v := range f.asked(&q) {
			need(ix.sets[f], f.key(v))
		}
	}
	slices.SortFunc(m.sets, func(a, b *entrySet) int { return a.n - b.n })
	m.filtered = len(m.sets) > 0 || m.notPremium
	if m.none || m.words == 0 && !m.filtered {
		return m
	}
	m.s = ix.fit(m.s, m.planes)
	if m.filtered {
		m.filter()
	}
	if m.words > 0 {
		if m.filtered {
			copy(m.s.matched, m.s.passing)
		} else {
			copy(m.s.matched, ix.alive)
		}
		for i, w := range q.Words {
			m.matchWord(w, i == 0)
		}
	}
	return m
}

// matchWord keeps the slots that have a lexeme starting with w and adds the best weight
// among those lexemes to their score (the first word sets it), 64 slots at a time. A word
// with a bitmap lexeme copies the first one into the word's bitmaps and ORs the others; a word
// of lists only touches the bitmap words its slots fall in (matchLists).
func (m *match) matchWord(w string, first bool) {
	ix, s := m.ix, m.s
	_, from, _ := ix.lexemeOf(w) // the first lexeme not before w
	to := from
	for to < len(ix.byText) && strings.HasPrefix(ix.lexText(ix.byText[to]), w) {
		to++
	}
	lexemes := ix.byText[from:to]
	copied := false
	for _, l := range lexemes {
		d := ix.bitsOf(l)
		if d == nil {
			continue
		}
		if !copied {
			for i := range s.has {
				var h, lo, hi uint64
				if i < len(d.has) {
					h, lo, hi = d.has[i], d.lo[i], d.hi[i]
				}
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
		m.matchLists(lexemes, first)
		return
	}
	for _, l := range lexemes {
		for _, p := range ix.listOf(l) {
			s.setPosting(p)
		}
	}
	m.score(0, len(s.matched), first)
}

// matchLists is matchWord for a word whose lexemes are all lists: it sets their bits, scores
// the bitmap words they touched, keeps no match elsewhere and zeroes what it set.
func (m *match) matchLists(lexemes []int32, first bool) {
	ix, s := m.ix, m.s
	if s.held {
		clear(s.has)
		clear(s.ge1)
		clear(s.ge2)
		clear(s.ge3)
		s.held = false
	}
	s.touched = s.touched[:0]
	for _, l := range lexemes {
		for _, p := range ix.listOf(l) {
			if i := int(p >> 8); s.has[i] == 0 {
				s.touched = append(s.touched, i)
			}
			s.setPosting(p)
		}
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

// setPosting sets a posting's slot in the word's bitmaps.
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

// score keeps the slots of bitmap words from..to that the word has and adds the word's best
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

// fit answers s, or a scratch made anew when s is nil or sized for other slots, sized for the
// index's slots with at least planes score planes.
func (ix *index) fit(s *scratch, planes int) *scratch {
	words := ix.words()
	if s == nil || len(s.passing) != words {
		s = &scratch{passing: make([]uint64, words), matched: make([]uint64, words), level: make([]uint64, words),
			has: make([]uint64, words), ge1: make([]uint64, words), ge2: make([]uint64, words), ge3: make([]uint64, words)}
	}
	for len(s.score) < planes {
		s.score = append(s.score, make([]uint64, words))
	}
	return s
}

// release ends the match and answers its scratch (nil when it had none), for the next one.
func (m *match) release() *scratch {
	s := m.s
	m.s = nil
	return s
}

// filter sets the bits of the slots that pass the filters: those of the smallest set that is
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
	copy(passing, m.ix.alive)
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

// count answers how many slots pass.
func (m *match) count() int {
	switch {
	case m.none:
		return 0
	case m.words > 0:
		return ones(m.s.matched)
	case m.filtered:
		return ones(m.s.passing)
	}
	return m.ix.n
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

// page answers up to limit passing slots after the first offset in the order of sort. A
// relevance page takes the matches of each score, from the highest, each in the popular order
// (byScore).
func (m *match) page(sort string, offset, limit int) []int32 {
	if m.none {
		return nil
	}
	if sort != catalog.SortRelevance || m.words == 0 {
		if m.words == 0 && !m.filtered {
			// Every slot in use passes: the page is a window of the order.
			return m.ix.orders[orderOf(sort)].window(offset, limit)
		}
		chosen := m.s.matched
		if m.words == 0 {
			chosen = m.s.passing
		}
		return m.pageOf(chosen, orderOf(sort), offset, limit)
	}
	return m.byScore(catalog.WeightName*m.words, offset, limit)
}

// byScore answers up to limit matched slots after the first offset: those of each score from
// top down to 0, each score's in the popular order.
func (m *match) byScore(top, offset, limit int) []int32 {
	var entries []int32
	level := m.s.level
	for sc := top; sc >= 0 && len(entries) < limit; sc-- {
		for w, x := range m.s.matched {
			for j, plane := range m.s.score[:m.planes] {
				if sc>>j&1 != 0 {
					x &= plane[w]
				} else {
					x &^= plane[w]
				}
			}
			level[w] = x
		}
		n := ones(level)
		if offset >= n {
			offset -= n
			continue
		}
		entries = append(entries, m.pageOf(level, orderPopular, offset, limit-len(entries))...)
		offset = 0
	}
	return entries
}

// related answers up to limit slots in use other than s that share a category or a tag with
// it: those sharing the most first, each score's in the popular order (the oracle's shared
// count DESC, use_count DESC, id DESC). It is a search whose words are s's category and tag
// sets, any of which matches: each set adds one to the score of its slots, kept in the
// scratch's planes with a carry as a word's weight is (score).
func (ix *index) related(s int32, limit int, sc *scratch) ([]int32, *scratch) {
	var sets []*entrySet
	for _, group := range []map[string]*entrySet{ix.sets[filterCategory], ix.sets[filterTag]} {
		for _, set := range group {
			if set.has(s) {
				sets = append(sets, set)
			}
		}
	}
	if len(sets) == 0 {
		return nil, sc
	}
	planes := bits.Len(uint(len(sets)))
	m := &match{ix: ix, planes: planes, s: ix.fit(sc, planes)}
	matched, score := m.s.matched, m.s.score[:planes]
	clear(matched)
	for _, plane := range score {
		clear(plane)
	}
	add := func(w int, x uint64) {
		matched[w] |= x
		for _, plane := range score {
			if plane[w], x = plane[w]^x, plane[w]&x; x == 0 {
				return
			}
		}
	}
	for _, set := range sets {
		for w, x := range set.bits {
			add(w, x)
		}
		for _, e := range set.list {
			add(int(e/64), 1<<(e%64))
		}
	}
	matched[s/64] &^= 1 << (s % 64)
	return m.byScore(len(sets), 0, limit), m.release()
}

// pageOf answers up to limit slots of chosen after the first offset in order o. When few
// slots pass, sorting them by their place costs less than walking the order until enough
// passed (about (offset+limit) * slots / passing steps, each a bit test at a random place).
func (m *match) pageOf(chosen []uint64, o, offset, limit int) []int32 {
	ranks, order := m.ix.ranks[o], &m.ix.orders[o]
	passing := ones(chosen)
	if float64(passing)*float64(passing)*16 > float64(offset+limit)*float64(order.len()) {
		return order.firstOf(chosen, offset, limit)
	}
	entries := make([]int32, 0, passing)
	for w, x := range chosen {
		for ; x != 0; x &= x - 1 {
			entries = append(entries, int32(64*w+bits.TrailingZeros64(x))) // #nosec G115 -- bounded by the slots
		}
	}
	slices.SortFunc(entries, func(a, b int32) int { return cmp.Compare(ranks[a], ranks[b]) })
	return window(entries, offset, limit)
}

// window answers up to limit entries after the first offset, nil when none.
func window(entries []int32, offset, limit int) []int32 {
	if offset >= len(entries) {
		return nil
	}
	return slices.Clone(entries[offset:min(len(entries), offset+limit)])
}

// size estimates the bytes the index holds: per slot its id (16), keys (24), name and card
// (records: their offsets and bytes), record of lexemes, labels (16) and the slot table's
// cells; the orders' blocks; per lexeme its text, its offset (4), postings word (4), place in
// byText (4) and table cells; the lists and bitmaps of postings and of the filter values.
func (ix *index) size() int {
	n := 40*len(ix.ids) + ix.cards.size() + ix.lexes.size() + 4*len(ix.byText) +
		8*len(ix.alive) + 4*nOrders*len(ix.ids) + 4*len(ix.slot.cells) + 4*len(ix.free) + ix.premium.size()
	for _, sets := range ix.sets {
		for v, s := range sets {
			n += len(v) + s.size()
		}
	}
	n += len(ix.lexBytes) + 12*len(ix.post) + 4*len(ix.lexID.cells)
	for o := range nOrders {
		n += ix.orders[o].size()
	}
	for _, m := range ix.many {
		n += 32 + 4*cap(m.list)
		if m.bits != nil {
			n += 72 + 24*len(m.bits.has)
		}
	}
	return n
}
