// Package cache holds the catalog's read model: each content-svc process keeps every catalog
// template (published, not deleted) in memory as GET /v1/templates tests, sorts and shows it
// (the listing index, index.go), and answers every listing from it alone: search, every
// filter, every sort, paging, the exact total and has_more, and the related templates.
//
// What it guarantees:
//   - Ready means indexed: until the catalog is first read, listings answer 503 and Ready
//     fails; so does a catalog larger than the configured bound (loudly, at error level).
//   - Exact as of a catalog version: the index holds the catalog as of one version (migration
//     00090: gapless, in commit order). Each change is applied in place, in version order: the
//     process reads the templates the log names as they are now and re-places them.
//   - Current within a notification: every change notifies its version; the process then
//     reads the log from the version it holds, so a lost notification is made up by the next
//     one, by the listener's reconnection, or by the poll (Options.Poll) at the latest.
//   - Gaps reload in place, in the background: a log that cannot bring the index to the
//     current version (pruned past it, begun again, a truncation) reads the whole catalog again
//     and applies to the index it holds only the templates that differ, then takes out those
//     no longer read, so a reload never holds a second index (reconcile). A failure while
//     applying (a panic: a bug may have left the index wrong in a way its rows do not show)
//     reads the catalog into a new index while the previous one keeps answering. Either way
//     the changes that arrive meanwhile are applied after it.
//   - A batch applies all or none: the changes read in one pass are applied together, and one
//     failing half way (a bug) undoes those applied before it, so the index answers as it was
//     before the batch; an index that cannot be put back answers none (503, not ready) until
//     read again (ADR 0165).
//   - A process reads its own writes: a catalog write of this process returns once the index
//     applied it (or after a bound wait), whatever the notification's delay.
package cache

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pglisten"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// Channel is the notification channel of migration 00090's triggers; a payload is a version.
const Channel = "content_catalog"

// ApplicationName names the listening connection in pg_stat_activity.
const ApplicationName = "content-svc listener"

// syncWait bounds how long a write of this process waits for the index to apply it.
const syncWait = 2 * time.Second

// Lister reads the catalog for the index (store.Catalog).
type Lister interface {
	// Listing reads the whole catalog as one snapshot, in the popular order, and answers its
	// version and size; a catalog of more than max templates is counted, not read. It tells
	// size how many templates it reads before the first.
	Listing(ctx context.Context, max int, size func(int), v func(catalog.ListingRow) error) (catalog.ListingVersion, int, error)
	// ListingChanges reads the templates changed after since, as they are now, and answers
	// the version read, or catalog.ErrListingGap.
	ListingChanges(ctx context.Context, since catalog.ListingVersion, v func(catalog.ListingRow) error) (catalog.ListingVersion, error)
}

// Options bound and tune the index.
type Options struct {
	// MaxTemplates is the largest catalog indexed; a larger one fails readiness.
	MaxTemplates int
	// Poll is how often the catalog's version is read when no notification came.
	Poll time.Duration
}

// Catalog is a catalog.Store whose listings are answered by the index it keeps; everything
// else passes through to the wrapped Store, and its catalog writes return once the index
// applied them. Run keeps the index. Safe for concurrent use.
type Catalog struct {
	catalog.Store
	src  Lister
	opts Options
	log  *slog.Logger

	templates prometheus.Gauge
	applies   prometheus.Histogram
	reloads   prometheus.Counter

	mu sync.RWMutex // guards ix and everything it holds
	ix *index

	kick chan struct{}

	state     sync.Mutex
	notReady  error
	reload    bool // the next pass reads the whole catalog
	started   uint64
	done      uint64
	passed    chan struct{} // closed when a pass ends
	overBound bool          // said once until the catalog fits again
	// scratches holds one scratch, or nil until one is made, per listing that may compute at
	// once (one per core): a scratch is 7 to 12 bitmaps of the slots (1.5 MB at a million
	// templates), so more listings than cores wait for one rather than allocate their own. They
	// wait before the read lock, so that a change waits only for the listings computing, never
	// for the ones queued behind them (ADR 0196).
	scratches chan *scratch
}

// NewCatalog returns a Catalog over s answering listings from an index read from src, and
// registers its metrics on reg.
func NewCatalog(s catalog.Store, src Lister, opts Options, log *slog.Logger, reg prometheus.Registerer) (*Catalog, error) {
	if opts.Poll <= 0 {
		opts.Poll = 5 * time.Second
	}
	c := &Catalog{Store: s, src: src, opts: opts, log: log.With("component", "catalog index"), kick: make(chan struct{}, 1),
		notReady: errors.New("cache: the catalog is not read yet"), passed: make(chan struct{}), scratches: make(chan *scratch, runtime.GOMAXPROCS(0)),
		templates: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "content_catalog_index_templates",
			Help: "Templates held by this process's listing index (0 until it is read).",
		}),
		applies: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "content_catalog_index_apply_seconds",
			Help:    "Time to read and apply one batch of catalog changes to the listing index.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "content_catalog_index_reloads_total",
			Help: "Reads of the whole catalog into the listing index (the first one included).",
		}),
	}
	for range cap(c.scratches) {
		c.scratches <- nil
	}
	for _, m := range []prometheus.Collector{c.templates, c.applies, c.reloads} {
		if err := reg.Register(m); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// NewListener returns a listener that tells c of every catalog change while it listens on
// Channel over its own connection to the database at dsn (which must not go through a
// transaction-pooling proxy), and registers its content_catalog_cache_listening gauge on reg.
// Each (re)connection makes c read the log, so nothing missed while it did not listen stays
// missed. It fails when dsn does not parse or the gauge cannot be registered.
func NewListener(c *Catalog, dsn string, log *slog.Logger, reg prometheus.Registerer) (*pglisten.Listener, error) {
	return pglisten.New(pglisten.Options{
		DSN: dsn, Channel: Channel, ApplicationName: ApplicationName,
		Gauge: prometheus.GaugeOpts{
			Name: "content_catalog_cache_listening",
			Help: "1 while the process listens for catalog changes (else it finds them by polling), else 0.",
		},
		Notify: func(string) { c.wake() },
		Live: func(live bool) {
			if live {
				c.wake()
			}
		},
	}, log, reg)
}

// Ready answers nil once the index holds the catalog, and why not before or when the catalog
// is larger than its bound (an httpx readiness check).
func (c *Catalog) Ready(context.Context) error {
	c.state.Lock()
	defer c.state.Unlock()
	return c.notReady
}

// wake asks Run for a pass.
func (c *Catalog) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Sync waits until the index applied every change committed before it was called, for at most
// syncWait or until ctx is done; it returns at once while no index is kept.
func (c *Catalog) Sync(ctx context.Context) {
	c.mu.RLock()
	kept := c.ix != nil
	c.mu.RUnlock()
	if !kept {
		return
	}
	c.state.Lock()
	target := c.started + 1
	c.state.Unlock()
	c.wake()
	timeout := time.NewTimer(syncWait)
	defer timeout.Stop()
	for {
		c.state.Lock()
		done, passed := c.done, c.passed
		c.state.Unlock()
		if done >= target {
			return
		}
		select {
		case <-passed:
		case <-timeout.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Templates answers up to q.PageSize+1 cards of q's page from its start, and q's total, from
// the index alone (listing).
func (c *Catalog) Templates(ctx context.Context, q catalog.TemplateQuery) (cards []catalog.TemplateCard, total int, err error) {
	err = c.listing(ctx, func(ix *index, s *scratch) *scratch {
		m := ix.compile(q, s)
		cards = ix.templateCards(m.page(q.Sort, (q.Page-1)*q.PageSize, q.PageSize+1))
		total = m.count()
		return m.release()
	})
	return cards, total, err
}

// Related answers up to limit cards of the catalog's templates sharing a category or a tag
// with the template containerID, those sharing the most first, from the index alone
// (listing); apperr NotFound when that template is not in the catalog.
func (c *Catalog) Related(ctx context.Context, containerID string, limit int) ([]catalog.TemplateCard, error) {
	var (
		cards []catalog.TemplateCard
		held  bool
	)
	id, err := uuid.Parse(containerID)
	if err == nil {
		err = c.listing(ctx, func(ix *index, s *scratch) *scratch {
			var slot int32
			if slot, held = ix.slotOf(id); !held {
				return s
			}
			var entries []int32
			entries, s = ix.related(slot, limit, s)
			cards = ix.templateCards(entries)
			return s
		})
		if err != nil {
			return nil, err
		}
	}
	if !held {
		return nil, apperr.E(apperr.NotFound, "template_not_found", "No published template has this id.")
	}
	return cards, nil
}

// listing runs f over the index with a scratch under the read lock, keeping the scratch f
// answers for the next listing; apperr Unavailable before the catalog is read, and ctx's error
// when it is done while the listing waits for a scratch. The scratch goes back to the pool
// however the listing ends, a panic included, so a bug never leaves the listings after it
// waiting.
func (c *Catalog) listing(ctx context.Context, f func(ix *index, s *scratch) *scratch) error {
	var s *scratch
	select {
	case s = <-c.scratches:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { c.scratches <- s }()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.ix == nil {
		return apperr.E(apperr.Unavailable, "catalog_not_ready", "The catalog is being read; try again shortly.")
	}
	s = f(c.ix, s)
	return nil
}

// wrote waits until the index applied a catalog write of this process that returned, whether
// or not it failed (a failure may still have committed), and passes err on.
func (c *Catalog) wrote(ctx context.Context, err error) error {
	c.Sync(ctx)
	return err
}

// CreateContainer stores a container and waits for the index to apply it.
func (c *Catalog) CreateContainer(ctx context.Context, ct catalog.Container) error {
	return c.wrote(ctx, c.Store.CreateContainer(ctx, ct))
}

// UpdateContainer updates a container and waits for the index to apply it.
func (c *Catalog) UpdateContainer(ctx context.Context, id string, update func(*catalog.Container) error) (catalog.Container, error) {
	ct, err := c.Store.UpdateContainer(ctx, id, update)
	return ct, c.wrote(ctx, err)
}

// DeleteContainer deletes a container and waits for the index to apply it.
func (c *Catalog) DeleteContainer(ctx context.Context, id string, at time.Time) error {
	return c.wrote(ctx, c.Store.DeleteContainer(ctx, id, at))
}

// SetPublished publishes or unpublishes a container and waits for the index to apply it.
func (c *Catalog) SetPublished(ctx context.Context, id string, published bool, reason, actor string, at time.Time) error {
	return c.wrote(ctx, c.Store.SetPublished(ctx, id, published, reason, actor, at))
}

// CreateProject stores a project and waits for the index to apply it (its aspect shows on cards).
func (c *Catalog) CreateProject(ctx context.Context, p catalog.Project) error {
	return c.wrote(ctx, c.Store.CreateProject(ctx, p))
}

// UpdateProject updates a project and waits for the index to apply it.
func (c *Catalog) UpdateProject(ctx context.Context, id string, update func(*catalog.Project) error) (catalog.Project, error) {
	p, err := c.Store.UpdateProject(ctx, id, update)
	return p, c.wrote(ctx, err)
}

// DeleteProject deletes a project and waits for the index to apply it.
func (c *Catalog) DeleteProject(ctx context.Context, id string) error {
	return c.wrote(ctx, c.Store.DeleteProject(ctx, id))
}
