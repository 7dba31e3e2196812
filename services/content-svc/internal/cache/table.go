package cache

// table is a set of int32 values (slots, lexeme ids), each standing for a key (a template id,
// a lexeme's text) that the index holds elsewhere: open addressing with linear probing in a
// power-of-two array of cells, -1 for an empty one, at most 3/4 full. It does what a Go map
// from key to value would, at 4 to 8 bytes a value rather than some 40 (a map keeps the key
// beside the value, and its groups are at most 7/8 full).
//
// Invariant: every value sits at or after its key's home cell (hash & mask), with no empty
// cell between them; remove keeps it by shifting the values after a removed one back
// (no tombstones). The caller passes each key's hash, and hash and is as plain functions of
// the index, so that a lookup allocates nothing.
type table struct {
	cells []int32
	n     int
}

// find answers the value whose key is key (is tells), and whether there is one.
func find[K any](t *table, ix *index, h uint64, key K, is func(*index, int32, K) bool) (int32, bool) {
	if len(t.cells) == 0 {
		return 0, false
	}
	mask := t.mask()
	for i := h & mask; ; i = (i + 1) & mask {
		v := t.cells[i]
		if v < 0 {
			return 0, false
		}
		if is(ix, v, key) {
			return v, true
		}
	}
}

// add adds v, not in the table, whose key hashes to h; hash answers the hash of a value's key,
// to place the values again when the table grows.
func (t *table) add(ix *index, h uint64, v int32, hash func(*index, int32) uint64) {
	if 4*(t.n+1) > 3*len(t.cells) {
		old := t.cells
		t.cells = make([]int32, max(16, 2*len(old)))
		for i := range t.cells {
			t.cells[i] = -1
		}
		for _, x := range old {
			if x >= 0 {
				t.place(hash(ix, x), x)
			}
		}
	}
	t.place(h, v)
	t.n++
}

// mask answers the bits of a hash that name a cell: the table has a power of two of them.
func (t *table) mask() uint64 {
	return uint64(len(t.cells) - 1) // #nosec G115 -- at least 16 cells when it is used
}

// place puts v in the first empty cell from its home.
func (t *table) place(h uint64, v int32) {
	mask := t.mask()
	i := h & mask
	for t.cells[i] >= 0 {
		i = (i + 1) & mask
	}
	t.cells[i] = v
}

// remove takes v, whose key hashes to h, out when it is there, and moves back each value
// after it that would otherwise be cut off from its home by the emptied cell.
func (t *table) remove(ix *index, h uint64, v int32, hash func(*index, int32) uint64) {
	if len(t.cells) == 0 {
		return
	}
	mask := t.mask()
	i := h & mask
	for t.cells[i] != v {
		if t.cells[i] < 0 {
			return
		}
		i = (i + 1) & mask
	}
	t.n--
	for j := (i + 1) & mask; t.cells[j] >= 0; j = (j + 1) & mask {
		home := hash(ix, t.cells[j]) & mask
		// The value at j may fill the hole at i unless its home lies cyclically in (i, j].
		if i <= j && (home <= i || home > j) || i > j && home <= i && home > j {
			t.cells[i] = t.cells[j]
			i = j
		}
	}
	t.cells[i] = -1
}
