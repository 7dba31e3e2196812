// Package cache keeps the catalog's listings in process memory: each page of cards per
// normalised query and each total per filter set, so that a hot GET /v1/templates makes no
// database round trip. They are kept exact across replicas by Postgres LISTEN/NOTIFY: every
// change that can change a page or a total notifies Channel in its own transaction (migration
// 00038's triggers), and each process's one listening connection (NewListener) drops every
// entry when it hears it. The catalog writes of this process also drop them when they return,
// so a caller always reads its own writes, whatever the notification's delay.
//
// Correctness does not depend on timing: every value comes from the database, and a value read
// while a change or a reset arrived is not kept (each read takes a ticket, the generation it
// started at). While the listener is not listening (before it first connects, and from the
// moment it loses its connection until it listens again) nothing is cached and every listing
// reads the database; every entry is dropped on the loss and again on the reconnect.
package cache

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/motionstudio/platform/pkg/pglisten"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// Channel is the notification channel of migration 00038's triggers.
const Channel = "content_catalog"

// ApplicationName names the listening connection in pg_stat_activity.
const ApplicationName = "content-svc listener"

// DefaultMaxBytes bounds the memory a Catalog keeps by default (estimated from the cards'
// strings and fixed sizes; a page of 20 cards is some 8 KB).
const DefaultMaxBytes = 32 << 20

// Estimated sizes of what an entry holds besides its strings' bytes.
const (
	entryOverhead = 128
	cardOverhead  = 208
	totalSize     = 16
)

// Catalog is a catalog.Store that answers pages and totals from memory while they are exact;
// everything else passes through to the wrapped Store. Safe for concurrent use.
type Catalog struct {
	catalog.Store

	mu     sync.Mutex
	gen    pglisten.Generation
	max    int
	bytes  int
	pages  map[string][]catalog.TemplateCard
	sizes  map[string]int
	totals map[string]int
	// index, when of the current generation, answers what no entry holds (Indexer keeps it).
	index *index
	want  chan struct{}
}

// NewCatalog returns a Catalog over s keeping at most maxBytes (estimated) of pages and totals;
// maxBytes 0 keeps nothing. It caches nothing until SetLive(true).
func NewCatalog(s catalog.Store, maxBytes int) *Catalog {
	c := &Catalog{Store: s, max: maxBytes, want: make(chan struct{}, 1)}
	c.clear()
	return c
}

// NewListener returns a listener that keeps c live while it listens on Channel over its own
// connection to the database at dsn (which must not go through a transaction-pooling proxy)
// and registers its content_catalog_cache_listening gauge on reg. It fails when dsn does not
// parse or the gauge cannot be registered.
func NewListener(c *Catalog, dsn string, log *slog.Logger, reg prometheus.Registerer) (*pglisten.Listener, error) {
	return pglisten.New(pglisten.Options{
		DSN: dsn, Channel: Channel, ApplicationName: ApplicationName,
		Gauge: prometheus.GaugeOpts{
			Name: "content_catalog_cache_listening",
			Help: "1 while the process listens for catalog changes (and so keeps catalog pages and totals in memory), else 0.",
		},
		Notify: func(string) { c.Forget() },
		Live:   c.SetLive,
	}, log, reg)
}

func (c *Catalog) clear() {
	c.pages = make(map[string][]catalog.TemplateCard)
	c.sizes = make(map[string]int)
	c.totals = make(map[string]int)
	c.bytes = 0
}

// SetLive drops every entry and says whether entries may be kept from now on: true once the
// listener listens, false as soon as it lost its connection.
func (c *Catalog) SetLive(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clear()
	c.gen.SetLive(live)
	c.index = nil
	c.wantIndex()
}

// Forget drops every entry: the catalog changed.
func (c *Catalog) Forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clear()
	c.gen.Advance()
	// The index cannot be used past a change; the next one is read without it held as well.
	c.index = nil
	c.wantIndex()
}

// wantIndex tells an Indexer, when one runs, that the index is behind.
func (c *Catalog) wantIndex() {
	select {
	case c.want <- struct{}{}:
	default:
	}
}

// currentIndex answers the index when it is of the current generation and the cache is live.
func (c *Catalog) currentIndex() *index {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index == nil || !c.gen.Keeps(c.index.at) {
		return nil
	}
	return c.index
}

// ticket is taken before a database read: what was read is kept only when the cache was live
// then and no change or reset arrived since.
func (c *Catalog) ticket() pglisten.Ticket {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen.Ticket()
}

// Templates answers the page of q from memory, or from the wrapped store (keeping it when it
// may). The cards are shared: callers must not change them.
func (c *Catalog) Templates(ctx context.Context, q catalog.TemplateQuery) ([]catalog.TemplateCard, error) {
	key := pageKey(q)
	return lookup(c, func() map[string][]catalog.TemplateCard { return c.pages }, key, key,
		func(cards []catalog.TemplateCard) int { return len(key) + cardsSize(cards) },
		func() ([]catalog.TemplateCard, error) {
			if m := c.compile(q); m != nil {
				entries, total, counted := m.page(q.Sort, (q.Page-1)*q.PageSize, q.PageSize+1)
				m.release()
				cards, ok, err := m.ix.cards(ctx, entries)
				if err != nil {
					return nil, err
				}
				if ok {
					if counted {
						// The index was current when compiled; put keeps the total only if it still is.
						ck := countKey(q)
						c.put(m.ix.at, "#"+ck, len(ck)+totalSize, func() { c.totals[ck] = total })
					}
					return cards, nil
				}
			}
			return c.Store.Templates(ctx, q)
		})
}

// CountTemplates answers the total of q's filters from memory, or from the wrapped store
// (keeping it when it may).
func (c *Catalog) CountTemplates(ctx context.Context, q catalog.TemplateQuery) (int, error) {
	key := countKey(q)
	return lookup(c, func() map[string]int { return c.totals }, key, "#"+key,
		func(int) int { return len(key) + totalSize },
		func() (int, error) {
			if m := c.compile(q); m != nil {
				defer m.release()
				return m.count(), nil
			}
			return c.Store.CountTemplates(ctx, q)
		})
}

// compile answers q compiled against the current index, or nil when there is none or it
// cannot answer q exactly. The caller releases it.
func (c *Catalog) compile(q catalog.TemplateQuery) *match {
	ix := c.currentIndex()
	if ix == nil {
		return nil
	}
	m, ok := ix.compile(q)
	if !ok {
		return nil
	}
	return m
}

// lookup answers key's value from the map entries returns (read under the lock, since a reset
// replaces the maps), or load's, kept as the entry id of the estimated size when it may be.
func lookup[T any](c *Catalog, entries func() map[string]T, key, id string, size func(T) int, load func() (T, error)) (T, error) {
	c.mu.Lock()
	v, ok := entries()[key]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	t := c.ticket()
	v, err := load()
	if err != nil {
		var zero T
		return zero, err
	}
	c.put(t, id, size(v), func() { entries()[key] = v })
	return v, nil
}

// put keeps an entry of the estimated size (store adds it to its map) when a value read with
// t may be kept; entries picked at random make room when the bound would be passed.
func (c *Catalog) put(t pglisten.Ticket, id string, size int, store func()) {
	size += entryOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.gen.Keeps(t) || size > c.max {
		return
	}
	if _, ok := c.sizes[id]; ok {
		return
	}
	for old, n := range c.sizes {
		if c.bytes+size <= c.max {
			break
		}
		c.bytes -= n
		delete(c.sizes, old)
		if page, ok := strings.CutPrefix(old, "#"); ok {
			delete(c.totals, page)
		} else {
			delete(c.pages, old)
		}
	}
	store()
	c.sizes[id] = size
	c.bytes += size
}

// wrote drops every entry after a catalog write of this process returned, whether or not it
// failed (a failure may still have committed), and passes err on.
func (c *Catalog) wrote(err error) error {
	c.Forget()
	return err
}

// CreateContainer stores a container and drops the cached listings.
func (c *Catalog) CreateContainer(ctx context.Context, ct catalog.Container) error {
	return c.wrote(c.Store.CreateContainer(ctx, ct))
}

// UpdateContainer updates a container and drops the cached listings.
func (c *Catalog) UpdateContainer(ctx context.Context, id string, update func(*catalog.Container) error) (catalog.Container, error) {
	ct, err := c.Store.UpdateContainer(ctx, id, update)
	return ct, c.wrote(err)
}

// DeleteContainer deletes a container and drops the cached listings.
func (c *Catalog) DeleteContainer(ctx context.Context, id string, at time.Time) error {
	return c.wrote(c.Store.DeleteContainer(ctx, id, at))
}

// SetPublished publishes or unpublishes a container and drops the cached listings.
func (c *Catalog) SetPublished(ctx context.Context, id string, published bool, reason, actor string, at time.Time) error {
	return c.wrote(c.Store.SetPublished(ctx, id, published, reason, actor, at))
}

// CreateProject stores a project and drops the cached listings (its aspect shows on cards).
func (c *Catalog) CreateProject(ctx context.Context, p catalog.Project) error {
	return c.wrote(c.Store.CreateProject(ctx, p))
}

// UpdateProject updates a project and drops the cached listings.
func (c *Catalog) UpdateProject(ctx context.Context, id string, update func(*catalog.Project) error) (catalog.Project, error) {
	p, err := c.Store.UpdateProject(ctx, id, update)
	return p, c.wrote(err)
}

// DeleteProject deletes a project and drops the cached listings.
func (c *Catalog) DeleteProject(ctx context.Context, id string) error {
	return c.wrote(c.Store.DeleteProject(ctx, id))
}

// countKey names the filter set of q: everything that changes the total, nothing that only
// sorts or pages.
func countKey(q catalog.TemplateQuery) string {
	tags := slices.Clone(q.TagIDs)
	slices.Sort(tags)
	premium := "any"
	if q.IsPremium != nil {
		premium = fmt.Sprint(*q.IsPremium)
	}
	return fmt.Sprintf("%q|%q|%q|%q|%q|%s", q.Words, strings.ToLower(q.CategoryID), tags, q.Mode, q.Aspect, premium)
}

// pageKey names q's page: its filter set, sort and place.
func pageKey(q catalog.TemplateQuery) string {
	return fmt.Sprintf("%s|%s|%d|%d", countKey(q), q.Sort, q.Page, q.PageSize)
}

func cardsSize(cards []catalog.TemplateCard) int {
	n := 0
	for _, c := range cards {
		n += cardOverhead + len(c.ContainerID) + len(c.Slug) + len(c.Name) + len(c.Image) + len(c.Demo) + len(c.MiniDemo) + len(c.PrimaryMode)
		for _, a := range c.AvailableAspects {
			n += 16 + len(a)
		}
	}
	return n
}
