package cache

import (
	"iter"
	"slices"
	"sort"
)

// blockMax is the most slots a block of an order holds: a block past it is split in two.
const blockMax = 2048

// order is the slots in use in one of an index's orders, held in blocks one after another, so
// that a template entering, leaving or moving shifts the slots of its block (at most 8 KB)
// rather than every slot after its place. With one array, at a million templates, each use
// counted shifted up to 4 MB and a template leaving and entering again 16 MB, under the write
// lock that every listing waits on (0.8 ms and 5.1 ms; BenchmarkUseCountedMillion,
// BenchmarkEnterLeaveMillion).
//
// Invariants: no block is empty, no block holds more than blockMax slots after a change (the
// blocks the first read makes hold blockMax), and before[i] is the number of slots in
// blocks[:i]. The blocks the first read makes share its array; each has its own capacity
// (a full slice expression), so a block that grows is copied rather than writing over the next.
type order struct {
	blocks [][]int32
	before []int
	n      int
}

// newOrder answers the order of slots, sorted, in blocks of blockMax that share its array.
func newOrder(slots []int32) order {
	o := order{n: len(slots)}
	for i := 0; i < len(slots); i += blockMax {
		end := min(i+blockMax, len(slots))
		o.blocks = append(o.blocks, slots[i:end:end])
		o.before = append(o.before, i)
	}
	return o
}

// len answers how many slots the order holds.
func (o *order) len() int { return o.n }

// block answers the block holding place p (0 <= p < o.n) and p's place in it.
func (o *order) block(p int) (int, int) {
	i := sort.Search(len(o.before), func(i int) bool { return o.before[i] > p }) - 1
	return i, p - o.before[i]
}

// at answers the slot at place p.
func (o *order) at(p int) int32 {
	i, j := o.block(p)
	return o.blocks[i][j]
}

// search answers the first place whose slot satisfies after, which must be false for the
// slots before some place and true from it on; o.len() when none does.
func (o *order) search(after func(s int32) bool) int {
	i := sort.Search(len(o.blocks), func(i int) bool { b := o.blocks[i]; return after(b[len(b)-1]) })
	if i == len(o.blocks) {
		return o.n
	}
	b := o.blocks[i]
	return o.before[i] + sort.Search(len(b), func(j int) bool { return after(b[j]) })
}

// from yields the places and slots from place p on, in order.
func (o *order) from(p int) iter.Seq2[int, int32] {
	return func(yield func(int, int32) bool) {
		if p >= o.n {
			return
		}
		i, j := o.block(p)
		for ; i < len(o.blocks); i, j = i+1, 0 {
			for k, s := range o.blocks[i][j:] {
				if !yield(o.before[i]+j+k, s) {
					return
				}
			}
		}
	}
}

// firstOf answers up to limit slots of chosen (a bit a slot) after its first offset, in order.
// It walks the blocks itself rather than through from: a listing filtered to one template in
// 20 tests some 2,400 slots a page, and the iterator's call a slot was a third of that walk.
func (o *order) firstOf(chosen []uint64, offset, limit int) []int32 {
	entries := make([]int32, 0, limit)
	for _, b := range o.blocks {
		for _, s := range b {
			if u := uint32(s); chosen[u/64]>>(u%64)&1 == 0 { // #nosec G115 -- a slot is not negative
				continue
			}
			if offset > 0 {
				offset--
				continue
			}
			if entries = append(entries, s); len(entries) == limit {
				return entries
			}
		}
	}
	return entries
}

// insert puts slot s at place q (0 <= q <= o.len()), after the slots before it.
func (o *order) insert(q int, s int32) {
	if o.n == 0 {
		o.blocks, o.before, o.n = [][]int32{{s}}, []int{0}, 1
		return
	}
	var i, j int
	if q == o.n {
		i = len(o.blocks) - 1
		j = len(o.blocks[i])
	} else {
		i, j = o.block(q)
	}
	o.blocks[i] = slices.Insert(o.blocks[i], j, s)
	o.n++
	for k := i + 1; k < len(o.before); k++ {
		o.before[k]++
	}
	if b := o.blocks[i]; len(b) > blockMax {
		half := len(b) / 2
		o.blocks = slices.Insert(o.blocks, i+1, slices.Clone(b[half:]))
		o.blocks[i] = b[:half:half]
		o.before = slices.Insert(o.before, i+1, o.before[i]+half)
	}
}

// remove takes out the slot at place p.
func (o *order) remove(p int) {
	i, j := o.block(p)
	o.blocks[i] = slices.Delete(o.blocks[i], j, j+1)
	o.n--
	for k := i + 1; k < len(o.before); k++ {
		o.before[k]--
	}
	if len(o.blocks[i]) == 0 {
		o.blocks = slices.Delete(o.blocks, i, i+1)
		o.before = slices.Delete(o.before, i, i+1)
	}
}

// window answers up to limit slots after the first offset, nil when none.
func (o *order) window(offset, limit int) []int32 {
	var out []int32
	for _, s := range o.from(offset) {
		if len(out) == limit {
			break
		}
		out = append(out, s)
	}
	return out
}

// size answers the bytes the order holds: its blocks' arrays and headers.
func (o *order) size() int {
	n := 32 * len(o.blocks)
	for _, b := range o.blocks {
		n += 4 * cap(b)
	}
	return n
}
