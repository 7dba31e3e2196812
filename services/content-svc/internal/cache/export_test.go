package cache

import "math"

// BreakNewWords makes c's index panic on the next new search word a change brings, half way
// through applying it, as a bug would; a search would panic too until the index is read again.
func BreakNewWords(c *Catalog) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ix.byText[len(c.ix.byText)/2] = math.MaxInt32
}
