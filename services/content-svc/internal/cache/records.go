package cache

import "encoding/binary"

// records holds a record of bytes per slot (a card, a slot's lexemes): one after another in b,
// each its length (uvarint) and bytes, slot s's at at[s] (0, an empty record, when none): 4
// bytes a slot rather than a 16-byte string or a pointer, and no allocation of its own. A
// record changed or dropped leaves garbage; past half of b, the records are copied anew. Bytes
// once appended are never written again: a view of them stays what it was (it keeps the old b
// when b grows or is copied anew).
type records struct {
	b       []byte
	at      []uint32
	garbage int  // bytes of b no slot's record is
	sized   bool // while building, b grows once to what the reserved slots will take (grow)
}

// newRecords answers records without a slot; sized ones grow while building as grow says,
// which suits records whose first slots' are as long as the rest's (not the lexemes': the
// first templates list the common words until those become bitmaps).
func newRecords(sized bool) records { return records{b: []byte{0}, sized: sized} }

// of answers slot s's record, a view of b.
func (r *records) of(s int32) []byte {
	at := r.at[s]
	n, k := binary.Uvarint(r.b[at:])
	from := int(at) + k
	return r.b[from : from+int(n) : from+int(n)] // #nosec G115 -- a record's length
}

// set makes rec slot s's record: kept where it is when it is already (a use counted keeps the
// card and the lexemes), else appended to b. While building, b is not copied anew, and sized
// records grow once they hold a sample of records to what the slots reserved will take (grow).
func (r *records) set(s int32, rec []byte, building bool) {
	if string(r.of(s)) == string(rec) {
		return
	}
	r.drop(s, building)
	if len(rec) == 0 {
		return
	}
	if building && r.sized {
		r.grow(binary.MaxVarintLen64 + len(rec))
	}
	r.at[s] = uint32(len(r.b)) // #nosec G115 -- copied anew past half garbage
	r.b = binary.AppendUvarint(r.b, uint64(len(rec)))
	r.b = append(r.b, rec...)
}

// growSample is how many slots' records grow reads before judging the size of all.
const growSample = 4096

// grow makes room for n more bytes in b while the catalog is read: past growSample slots, to
// the bytes of the records so far a slot times the slots reserved (cap(at)), and an eighth more.
// append grows b by a quarter at a time, each growth holding the old array beside the new: at a
// million templates, the last ones held some 40 MB twice and raised the first read's peak RSS
// by about 15 MiB (ADR 0204).
func (r *records) grow(n int) {
	if len(r.b)+n <= cap(r.b) || len(r.at) < growSample {
		return
	}
	want := len(r.b) * cap(r.at) / len(r.at)
	b := make([]byte, len(r.b), max(want+want/8, len(r.b)+n))
	copy(b, r.b)
	r.b = b
}

// drop drops slot s's record, and copies the records anew once more than half of b is dropped
// ones (not while building).
func (r *records) drop(s int32, building bool) {
	if at := r.at[s]; at != 0 {
		n, k := binary.Uvarint(r.b[at:])
		r.garbage += k + int(n) // #nosec G115 -- a record's length
		r.at[s] = 0
	}
	if !building && 2*r.garbage > len(r.b) {
		r.compact()
	}
}

// compact copies the slots' records anew, without the dropped ones, with room for an eighth
// more, so that the next changes do not copy them again at once.
func (r *records) compact() {
	size := len(r.b) - r.garbage
	b := make([]byte, 1, size+size/8)
	for s, at := range r.at {
		if at == 0 {
			continue
		}
		n, k := binary.Uvarint(r.b[at:])
		r.at[s] = uint32(len(b))                   // #nosec G115 -- at most the old records
		b = append(b, r.b[at:int(at)+k+int(n)]...) // #nosec G115 -- a record's length
	}
	r.b, r.garbage = b, 0
}

// size answers the bytes the records take: their offsets and bytes, garbage included.
func (r *records) size() int { return 4*len(r.at) + len(r.b) }
