package pglisten

// Generation is what a cache kept exact by a Listener checks a database read against: whether
// the listener listens (live) and a counter that every change and reset advances. A value read
// under a Ticket is kept only if the Generation still Keeps it: the cache was live when the
// read started and still is, and no change or reset arrived since.
//
// A Generation is not safe for concurrent use by itself: the cache guards it with the lock that
// guards its entries, so that dropping entries and advancing happen as one step.
type Generation struct {
	live bool
	n    uint64
}

// Ticket is the Generation a database read started under.
type Ticket struct {
	live bool
	n    uint64
}

// Ticket answers the current generation, taken before a read.
func (g *Generation) Ticket() Ticket { return Ticket{live: g.live, n: g.n} }

// Keeps reports whether a value read under t may be kept now.
func (g *Generation) Keeps(t Ticket) bool { return t.live && g.live && t.n == g.n }

// Live reports whether values may be kept.
func (g *Generation) Live() bool { return g.live }

// Advance records a change: nothing read before it is kept.
func (g *Generation) Advance() { g.n++ }

// SetLive advances and records whether values may be kept from now on: true once the listener
// listens, false as soon as it lost its connection.
func (g *Generation) SetLive(live bool) {
	g.n++
	g.live = live
}

// Live reports whether the ticket was taken while values could be kept.
func (t Ticket) Live() bool { return t.live }
