// Package bounded is the one in-process cache primitive of the repository: a map bounded by a
// size that evicts its least recently used entries, with an optional time to live and the
// generation rule of caches kept exact by notifications.
//
// The generation rule: a reader takes a Ticket before it reads the source, and Keep stores what
// it read only when no change (Delete, DeleteFunc, Clear) or reset (SetLive) happened since, so
// a value read while an invalidation arrived is never kept. A map made with Listened keeps
// nothing until SetLive(true): its listener says when notifications can reach it.
package bounded

import (
	"container/list"
	"sync"
	"time"
)

// Options configure a Map.
type Options[K comparable, V any] struct {
	// Max bounds the sum of the entries' sizes; a map with Max not positive keeps nothing.
	Max int
	// Size is an entry's share of Max; nil counts every entry as 1. An entry larger than Max
	// is not kept.
	Size func(K, V) int
	// TTL is how long an entry is answered after it was kept; 0 answers it until it is
	// evicted or dropped.
	TTL time.Duration
	// Now is the clock of TTL; nil is time.Now.
	Now func() time.Time
	// Listened makes the map keep nothing until SetLive(true).
	Listened bool
}

// Map is a bounded cache of V by K. Safe for concurrent use; the values it answers are shared
// with every other reader and must not be written.
type Map[K comparable, V any] struct {
	o Options[K, V]

	mu    sync.Mutex
	items map[K]*list.Element
	lru   list.List // of *entry[K, V], most recently used first
	used  int
	gen   uint64
	live  bool
}

type entry[K comparable, V any] struct {
	key     K
	value   V
	size    int
	expires time.Time // zero: never
}

// Ticket is the generation a read of the source started under (see the package comment).
type Ticket struct {
	gen  uint64
	live bool
}

// New returns an empty Map.
func New[K comparable, V any](o Options[K, V]) *Map[K, V] {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Map[K, V]{o: o, items: make(map[K]*list.Element), live: !o.Listened}
}

// Get answers the value kept for k while it has not expired.
func (m *Map[K, V]) Get(k K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	e := el.Value.(*entry[K, V])
	if !e.expires.IsZero() && !m.o.Now().Before(e.expires) {
		m.remove(el)
		var zero V
		return zero, false
	}
	m.lru.MoveToFront(el)
	return e.value, true
}

// Ticket answers the current generation; take it before reading the source.
func (m *Map[K, V]) Ticket() Ticket {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Ticket{gen: m.gen, live: m.live}
}

// Put keeps v for k (with the map's TTL) unless a reset made the map stop keeping values.
func (m *Map[K, V]) Put(k K, v V) { m.Keep(m.Ticket(), k, v) }

// Keep keeps v for k (with the map's TTL) when a value read under t may be kept: the map was
// live when t was taken and still is, and nothing was dropped since. It reports whether v was
// kept.
func (m *Map[K, V]) Keep(t Ticket, k K, v V) bool { return m.KeepFor(t, k, v, m.o.TTL) }

// KeepFor is Keep with its own time to live; ttl 0 keeps v until it is evicted or dropped.
func (m *Map[K, V]) KeepFor(t Ticket, k K, v V, ttl time.Duration) bool {
	size := 1
	if m.o.Size != nil {
		size = m.o.Size(k, v)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !t.live || !m.live || t.gen != m.gen || size > m.o.Max {
		return false
	}
	if el, ok := m.items[k]; ok {
		m.remove(el)
	}
	for m.used+size > m.o.Max {
		m.remove(m.lru.Back())
	}
	e := &entry[K, V]{key: k, value: v, size: size}
	if ttl > 0 {
		e.expires = m.o.Now().Add(ttl)
	}
	m.items[k] = m.lru.PushFront(e)
	m.used += size
	return true
}

func (m *Map[K, V]) remove(el *list.Element) {
	e := m.lru.Remove(el).(*entry[K, V])
	delete(m.items, e.key)
	m.used -= e.size
}

// Delete drops k; nothing read before is kept afterwards.
func (m *Map[K, V]) Delete(k K) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	if el, ok := m.items[k]; ok {
		m.remove(el)
	}
}

// DeleteFunc drops every entry drop reports true for; nothing read before is kept afterwards.
func (m *Map[K, V]) DeleteFunc(drop func(K, V) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	for k, el := range m.items {
		if drop(k, el.Value.(*entry[K, V]).value) {
			m.remove(el)
		}
	}
}

// Clear drops every entry; nothing read before is kept afterwards.
func (m *Map[K, V]) Clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clear()
}

func (m *Map[K, V]) clear() {
	m.gen++
	clear(m.items)
	m.lru.Init()
	m.used = 0
}

// SetLive drops every entry and says whether values may be kept from now on: true once the
// listener listens, false as soon as it lost its connection.
func (m *Map[K, V]) SetLive(live bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clear()
	m.live = live
}

// Live reports whether values are kept.
func (m *Map[K, V]) Live() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live
}

// Len is the number of entries kept, expired ones included until they are read or evicted.
func (m *Map[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.items)
}
