package cache

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// Run keeps the index until ctx is done: it reads the catalog, then, at each notification,
// reconnection, write of this process or poll, applies the changes logged since the version it
// holds, one pass at a time. It always answers nil.
func (c *Catalog) Run(ctx context.Context) error {
	poll := time.NewTicker(c.opts.Poll)
	defer poll.Stop()
	for {
		c.pass(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-c.kick:
		case <-poll.C:
		}
	}
}

// pass reads the whole catalog when there is no index yet or it must be read again, then
// applies the changes since the index's version, and wakes the Sync calls it serves.
func (c *Catalog) pass(ctx context.Context) {
	c.state.Lock()
	c.started++
	reload := c.reload
	c.state.Unlock()
	defer func() {
		c.state.Lock()
		c.done++
		close(c.passed)
		c.passed = make(chan struct{})
		c.state.Unlock()
	}()
	c.mu.RLock()
	missing := c.ix == nil
	c.mu.RUnlock()
	if (missing || reload) && !c.readAll(ctx) {
		return
	}
	if errors.Is(c.catchUp(ctx), catalog.ErrListingGap) && c.reconcile(ctx) {
		_ = c.catchUp(ctx)
	}
}

// errPanicked marks a read or an apply that panicked: a bug, not a database failure.
var errPanicked = errors.New("cache: the catalog index panicked")

// errApply marks a batch of changes the index failed to apply (and undid): a bug too.
var errApply = errors.New("cache: applying catalog changes failed")

// safely runs f, making a panic an error: a bug in the index must cost it a reload, not the
// process its life.
func safely(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v\n%s", errPanicked, p, debug.Stack())
		}
	}()
	return f()
}

// readAll reads the whole catalog into a new index and installs it, the previous one
// answering meanwhile, and reports whether it did. It is the first read, and the read after a
// failure (a bug may have left the index wrong in a way its rows do not show); a gap is read in
// place (reconcile).
func (c *Catalog) readAll(ctx context.Context) bool {
	start := time.Now()
	ix := newIndex()
	at, ok := c.readCatalog(ctx, ix.reserve, ix.apply, func() error {
		ix.finish()
		return nil
	})
	if !ok {
		return false
	}
	c.install(ix, at)
	c.log.Info("catalog index read", "templates", ix.n, "lexemes", len(ix.post), "bytes", ix.size(),
		"version", at.N, "took", time.Since(start))
	return true
}

// install makes ix, holding the catalog as of version at, the index listings are answered
// from, and the catalog ready.
func (c *Catalog) install(ix *index, at catalog.ListingVersion) {
	c.mu.Lock()
	ix.at, c.ix = at, ix
	c.mu.Unlock()
	c.state.Lock()
	c.reload, c.notReady, c.overBound = false, nil, false
	c.state.Unlock()
	c.templates.Set(float64(ix.n))
}

// readCatalog reads the whole catalog into visit (telling size its size first), then runs
// finish, and answers the version read and whether all of it succeeded. A read that fails or
// panics is said (failed), and so is a catalog larger than its bound (tooLarge).
func (c *Catalog) readCatalog(ctx context.Context, size func(int), visit func(catalog.ListingRow) error, finish func() error) (catalog.ListingVersion, bool) {
	var (
		at catalog.ListingVersion
		n  int
	)
	err := safely(func() error {
		var err error
		if at, n, err = c.src.Listing(ctx, c.opts.MaxTemplates, size, visit); err != nil || n > c.opts.MaxTemplates {
			return err
		}
		return finish()
	})
	c.reloads.Inc()
	switch {
	case ctx.Err() != nil:
		return at, false
	case err != nil:
		c.failed(err)
		return at, false
	case n > c.opts.MaxTemplates:
		c.tooLarge(n)
		return at, false
	}
	return at, true
}

// reconcileBatch bounds the changes a reload in place applies under one hold of the write
// lock, so that the listings waiting for it wait a few milliseconds at most.
const reconcileBatch = 64

// reconcile brings the index to the catalog as it is now in place, when the log cannot (a gap):
// it reads the whole catalog, applies the templates the index does not hold as read (holds), a
// batch at a time, then takes out those not read. A reload so holds one index, not a second one
// beside it: at a million templates, about 200 MB rather than twice that. Listings go on
// meanwhile, each seeing every template either as before or as read. It reports whether it
// did; a batch that fails to apply makes the next pass read the catalog into a new index.
func (c *Catalog) reconcile(ctx context.Context) bool {
	start := time.Now()
	// Only Run's goroutine changes the index (and c.ix): it reads them without the lock.
	ix := c.ix
	var (
		seen             = make([]uint64, ix.words())
		batch            []catalog.ListingRow
		changed, removed int
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		c.mu.Lock()
		err := ix.applyAll(batch)
		if errors.Is(err, errBroken) {
			c.ix = nil // as catchUp: answering from it could show a half-applied batch
		}
		c.mu.Unlock()
		if err != nil {
			return fmt.Errorf("%w (%d changes reading the catalog again): %w", errApply, len(batch), err)
		}
		for _, r := range batch {
			if r.Live {
				s, _ := ix.slotOf(uuid.MustParse(r.ID)) // parsed by apply
				seen = mark(seen, s)
			}
		}
		batch = batch[:0]
		return nil
	}
	at, ok := c.readCatalog(ctx, func(int) {}, func(r catalog.ListingRow) error {
		held, err := ix.holds(r)
		switch {
		case err != nil:
			return err
		case !held:
			changed++
			if batch = append(batch, r); len(batch) == reconcileBatch {
				return flush()
			}
		default:
			s, _ := ix.slotOf(uuid.MustParse(r.ID)) // parsed by holds
			seen = mark(seen, s)
		}
		return nil
	}, func() error {
		if err := flush(); err != nil {
			return err
		}
		// Taking a slot out clears only its own bit of alive, and no slot is made meanwhile.
		for s := range ix.slots() {
			if ix.alive[s/64]>>(s%64)&1 == 0 || s/64 < len(seen) && seen[s/64]>>(s%64)&1 != 0 {
				continue
			}
			removed++
			if batch = append(batch, catalog.ListingRow{ID: ix.ids[s].String()}); len(batch) == reconcileBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	})
	if !ok {
		return false
	}
	c.install(ix, at)
	c.log.Info("catalog index read again in place", "templates", ix.n, "changed", changed, "removed", removed,
		"version", at.N, "took", time.Since(start))
	return true
}

// mark sets slot s's bit in bits, grown to hold it.
func mark(bits []uint64, s int32) []uint64 {
	for int(s/64) >= len(bits) {
		bits = append(bits, 0)
	}
	bits[s/64] |= 1 << (s % 64)
	return bits
}

// catchUp applies the changes logged since the index's version.
func (c *Catalog) catchUp(ctx context.Context) error {
	start := time.Now()
	c.mu.RLock()
	since := c.ix.at
	c.mu.RUnlock()
	var rows []catalog.ListingRow
	var at catalog.ListingVersion
	err := safely(func() error {
		var err error
		at, err = c.src.ListingChanges(ctx, since, func(r catalog.ListingRow) error {
			rows = append(rows, r)
			return nil
		})
		return err
	})
	switch {
	case errors.Is(err, catalog.ErrListingGap):
		c.log.Info("catalog changes not in the log; reading the catalog again", "version", since.N)
		return err
	case err != nil:
		if ctx.Err() == nil {
			c.failed(err)
		}
		return err
	case at == since:
		return nil
	}
	c.mu.Lock()
	ix := c.ix
	if err = ix.applyAll(rows); err == nil {
		ix.at = at
	} else if errors.Is(err, errBroken) {
		c.ix = nil // answering from it could show a half-applied batch; 503 until read again
	}
	n := ix.n
	c.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("%w (%d changes since version %d): %w", errApply, len(rows), since.N, err)
		c.failed(err)
		return err
	}
	c.applies.Observe(time.Since(start).Seconds())
	c.templates.Set(float64(n))
	if n > c.opts.MaxTemplates {
		c.tooLarge(n)
		return nil
	}
	c.state.Lock()
	if c.overBound {
		c.notReady, c.overBound = nil, false
	}
	c.state.Unlock()
	return nil
}

// failed logs a read or an apply that failed; a panic or a batch that failed to apply (a bug)
// is logged at error level and makes the next pass read the whole catalog, the index answering
// as it was before the batch meanwhile (or, when it could not be put back, none: readiness
// fails until the read).
func (c *Catalog) failed(err error) {
	if errors.Is(err, errPanicked) || errors.Is(err, errApply) {
		c.state.Lock()
		c.reload = true
		if errors.Is(err, errBroken) {
			c.notReady = err
		}
		c.state.Unlock()
		c.wake()
		c.log.Error("catalog index failed; reading the catalog again", "error", err)
		return
	}
	c.log.Warn("catalog index not brought up to date; retrying at the next change or poll", "error", err)
}

// tooLarge fails readiness for a catalog of n templates, more than the bound.
func (c *Catalog) tooLarge(n int) {
	err := fmt.Errorf("cache: the catalog has %d templates, more than CATALOG_INDEX_MAX_TEMPLATES (%d)", n, c.opts.MaxTemplates)
	c.state.Lock()
	said := c.overBound
	c.notReady, c.overBound = err, true
	c.state.Unlock()
	c.templates.Set(float64(n))
	if !said {
		c.log.Error("catalog larger than its bound: not ready", "templates", n, "max_templates", c.opts.MaxTemplates)
	}
}
