package service

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"
)

// Worker is a background loop of a service (the HTTP server, the outbox relay's helpers,
// consumers, job workers, sweepers, listeners): Run works until ctx is done and then returns
// nil once it let go of what it held, or returns an error when it cannot go on.
type Worker interface {
	Run(ctx context.Context) error
}

// WorkerFunc makes a function a Worker.
type WorkerFunc func(ctx context.Context) error

// Run calls f.
func (f WorkerFunc) Run(ctx context.Context) error { return f(ctx) }

// RunAll runs every worker at once until ctx is done or one of them fails, which cancels the
// others' context. It returns once all have returned, with the first error.
func RunAll(ctx context.Context, workers ...Worker) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, w := range workers {
		g.Go(func() error { return w.Run(ctx) })
	}
	return g.Wait()
}

// Closers are the release functions of what a composition root opened, in the order it opened
// them.
type Closers struct{ fns []func() }

// Add appends the release of something just opened.
func (c *Closers) Add(fn func()) { c.fns = append(c.fns, fn) }

// Close releases everything in reverse order of opening, once: a second Close does nothing.
func (c *Closers) Close() {
	for i := len(c.fns) - 1; i >= 0; i-- {
		c.fns[i]()
	}
	c.fns = nil
}

// Every calls fn every interval until ctx is done, and then returns nil: the loop of the
// services' sweepers, flushers and reloaders.
func Every(ctx context.Context, interval time.Duration, fn func(ctx context.Context)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			fn(ctx)
		}
	}
}

// Sleep waits for d, or until ctx is done and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
