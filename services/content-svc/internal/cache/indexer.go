package cache

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

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
	if errors.Is(c.catchUp(ctx), catalog.ErrListingGap) && c.readAll(ctx) {
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
// answering meanwhile, and reports whether it did.
func (c *Catalog) readAll(ctx context.Context) bool {
	start := time.Now()
	ix := newIndex()
	var (
		at catalog.ListingVersion
		n  int
	)
	err := safely(func() error {
		var err error
		at, n, err = c.src.Listing(ctx, c.opts.MaxTemplates, ix.reserve, func(r catalog.ListingRow) error { return ix.apply(r) })
		if err == nil && n <= c.opts.MaxTemplates {
			ix.finish()
		}
		return err
	})
	c.reloads.Inc()
	switch {
	case ctx.Err() != nil:
		return false
	case err != nil:
		c.failed(err)
		return false
	case n > c.opts.MaxTemplates:
		c.tooLarge(n)
		return false
	}
	ix.at = at
	c.mu.Lock()
	c.ix = ix
	c.mu.Unlock()
	c.state.Lock()
	c.reload, c.notReady, c.overBound = false, nil, false
	c.state.Unlock()
	c.templates.Set(float64(ix.n))
	c.log.Info("catalog index read", "templates", ix.n, "lexemes", len(ix.post), "bytes", ix.size(),
		"version", at.N, "took", time.Since(start))
	return true
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
		if errors.Is(err, errBroken) {
			c.state.Lock()
			c.notReady = err
			c.state.Unlock()
		}
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
