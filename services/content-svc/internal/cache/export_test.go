package cache

import (
	"math"

	"github.com/google/uuid"
)

// BreakLastWords makes c's index panic on the next search word a change brings that sorts
// after every word it holds, half way through applying it, as a bug would; a search for such
// a word panics too until the index is read again. (A sentinel past the end of byText: only a
// binary search for a text greater than all of them reaches it.)
func BreakLastWords(c *Catalog) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ix.byText = append(c.ix.byText, math.MaxInt32)
}

// HoldScratches takes every listing scratch of c, as listings computing would, until the
// function it answers gives them back.
func HoldScratches(c *Catalog) func() {
	held := make([]*scratch, 0, cap(c.scratches))
	for range cap(c.scratches) {
		held = append(held, <-c.scratches)
	}
	return func() {
		for _, s := range held {
			c.scratches <- s
		}
	}
}

// LosePlace makes c's index lose template id's place in an order, as a bug would: the next
// change of the template panics, and so does putting it back.
func LosePlace(c *Catalog, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, _ := c.ix.slotOf(uuid.MustParse(id))
	losePlace(c.ix, s)
}

// losePlace takes slot s out of ix's newest order and leaves its label as it is. (A label put
// out of order instead would be found or not depending on where the search probes.)
func losePlace(ix *index, s int32) {
	order := &ix.orders[orderNewest]
	for p, x := range order.from(0) {
		if x == s {
			order.remove(p)
			return
		}
	}
}

// Held answers the index c holds now, to tell whether a reload replaced it.
func Held(c *Catalog) any {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ix
}
