package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/motionstudio/platform/pkg/pglisten"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// Lister reads the catalog for the listing index (store.Catalog): all of it as one snapshot
// with the cards of the first cards templates, and the cards of templates by id.
type Lister interface {
	Listing(ctx context.Context, cards int, v catalog.ListingVisitor) error
	TemplateCards(ctx context.Context, ids []string) ([]catalog.TemplateCard, error)
}

// IndexOptions bound the listing index.
type IndexOptions struct {
	// MaxTemplates is the largest catalog indexed; a larger one is listed by the database.
	// 0 keeps no index.
	MaxTemplates int
	// Cards is how many cards the index keeps, of the most used templates; a page showing
	// others reads their cards by id.
	Cards int
	// Every is the least time between the starts of two reads of the catalog, so that a stream
	// of changes costs one read per Every rather than one per change.
	Every time.Duration
}

// Indexer keeps a Catalog's listing index: whenever the catalog changed (a notification, a
// write of this process, the listener's start), it reads the catalog into a new index and
// installs it if no change arrived meanwhile. Until then the index is not used, so listings
// never answer from an index older than a change this process heard of.
type Indexer struct {
	c         *Catalog
	src       Lister
	opts      IndexOptions
	log       *slog.Logger
	templates prometheus.Gauge
	tooLarge  bool // said once until the catalog fits again
}

// NewIndexer returns an Indexer of c reading src, registering its gauge on reg.
func NewIndexer(c *Catalog, src Lister, opts IndexOptions, log *slog.Logger, reg prometheus.Registerer) (*Indexer, error) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "content_catalog_index_templates",
		Help: "Templates held by the last listing index this process read (0 while it keeps none).",
	})
	if err := reg.Register(g); err != nil {
		return nil, err
	}
	return &Indexer{c: c, src: src, opts: opts, log: log, templates: g}, nil
}

// Run keeps the index until ctx is done; it always answers nil.
func (x *Indexer) Run(ctx context.Context) error {
	if x.opts.MaxTemplates <= 0 {
		return nil
	}
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-x.c.want:
		}
		if wait := x.opts.Every - time.Since(last); wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
		last = time.Now()
		x.refresh(ctx)
	}
}

// refresh reads the catalog into an index and installs it, unless the cache is not live, the
// catalog is larger than the bound, or a change arrives while it reads (which asks again).
func (x *Indexer) refresh(ctx context.Context) {
	t := x.c.ticket()
	if !t.Live() {
		return
	}
	n, err := x.c.Store.CountTemplates(ctx, catalog.TemplateQuery{})
	if err != nil || n > x.opts.MaxTemplates {
		x.failed(ctx, err, n)
		return
	}
	start := time.Now()
	ix, err := x.read(ctx, t, n)
	if err != nil {
		x.failed(ctx, err, x.opts.MaxTemplates+1)
		return
	}
	if !x.c.install(ix) {
		return
	}
	x.tooLarge = false
	x.templates.Set(float64(len(ix.ids)))
	x.log.Debug("catalog index read", "templates", len(ix.ids), "cards", len(ix.kept), "lexemes", ix.lexemes(),
		"bytes", ix.size(), "took", time.Since(start))
}

// errIndexPanicked marks a read of the index that panicked: a bug, not a database failure.
var errIndexPanicked = errors.New("cache: the index read panicked")

// read reads the catalog of n templates into an index with ticket t. A panic while reading
// becomes an error: the index only spares the database work, so a bug in it must cost the
// process its index (listings read the database), not its life.
func (x *Indexer) read(ctx context.Context, t pglisten.Ticket, n int) (ix *index, err error) {
	defer func() {
		if p := recover(); p != nil {
			ix, err = nil, fmt.Errorf("%w: %v\n%s", errIndexPanicked, p, debug.Stack())
		}
	}()
	return buildIndex(ctx, x.src, t, n, x.opts)
}

// failed drops the index after a read that failed or a catalog of n templates, too large.
func (x *Indexer) failed(ctx context.Context, err error, n int) {
	x.c.install(nil)
	x.templates.Set(0)
	switch {
	case ctx.Err() != nil:
	case err == nil || errors.Is(err, errIndexTooLarge):
		if x.tooLarge {
			return
		}
		x.tooLarge = true
		x.log.Info("catalog index not kept: the catalog is larger than its bound", "max_templates", x.opts.MaxTemplates, "templates", n)
	case errors.Is(err, errIndexPanicked):
		x.log.Error("catalog index not read; listings read the database until the next change", "error", err)
	default:
		x.log.Warn("catalog index not read; listings read the database until the next change", "error", err)
	}
}

// install makes ix the index when no change arrived since it was read (nil drops the index),
// and reports whether it did.
func (c *Catalog) install(ix *index) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ix != nil && !c.gen.Keeps(ix.at) {
		return false
	}
	c.index = ix
	return true
}
