// Package jobs is what a worker needs to hold a job: the lease on the job's row, the errors
// that say another worker holds it or took it over, and Keep, which runs the job while renewing
// the lease. pkg/jobs/pgjobs keeps the rows; this package has no I/O, for domain packages.
package jobs

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/motionstudio/platform/pkg/service"
)

// Slack covers the clock difference between the worker that reads a lease's end and the
// database that set it: a job held by another worker is retried this long after the lease ends.
const Slack = 500 * time.Millisecond

// Lease is the hold of the worker Owner on the job ID until Until, taken for Length at the
// job's Attempt-th claim.
type Lease struct {
	ID, Owner string
	Attempt   int
	Until     time.Time
	Length    time.Duration
}

// ErrLeaseLost says the worker no longer holds the job: it was taken over after the lease
// lapsed, cancelled or finished by someone else. Its work must not be recorded.
var ErrLeaseLost = errors.New("jobs: the lease on the job was lost")

// ErrNoWork says a job cannot be claimed because it is finished, cancelled or unknown; its
// wake-up has nothing left to do.
var ErrNoWork = errors.New("jobs: the job is not waiting for a worker")

// HeldError says another worker holds the job until Until: its wake-up should come back once
// the lease ends (that worker may have died) rather than be dropped.
type HeldError struct{ Until time.Time }

func (e HeldError) Error() string {
	return "jobs: leased by another worker until " + e.Until.UTC().Format(time.RFC3339Nano)
}

// RetryAt is when claiming the job can succeed: the end of the lease plus Slack. natsx.Consume
// redelivers a wake-up whose handler failed with a HeldError then.
func (e HeldError) RetryAt() time.Time { return e.Until.Add(Slack) }

// Keep runs work, the job's execution, while renewing l every third of its length with renew.
// When renew answers ErrLeaseLost, work's context is cancelled and Keep returns ErrLeaseLost;
// other renewal errors are retried at the next tick. Otherwise it returns work's error.
func Keep(ctx context.Context, l Lease, renew func(context.Context, Lease) error, work func(context.Context) error) error {
	return KeepChecking(ctx, l, renew, nil, work)
}

// KeepChecking is Keep that also renews at once each time check delivers: a hint that the job
// may have been cancelled or taken over (a notification of its change), so that work's
// context is cancelled as soon as the renewal says the lease is lost rather than at the next
// tick. A nil check never delivers.
func KeepChecking(ctx context.Context, l Lease, renew func(context.Context, Lease) error, check <-chan struct{}, work func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	renewing := make(chan struct{})
	go func() {
		defer close(renewing)
		t := time.NewTicker(max(l.Length/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-check:
			}
			if errors.Is(renew(ctx, l), ErrLeaseLost) {
				cancel(ErrLeaseLost)
			}
		}
	}()
	err := work(ctx)
	cancel(nil)
	<-renewing
	if errors.Is(context.Cause(ctx), ErrLeaseLost) {
		return ErrLeaseLost
	}
	return err
}

// RunRequeuer calls requeue every interval until ctx is done, logging how many jobs (what) it
// queued again and its failures; it returns nil when ctx ends.
func RunRequeuer(ctx context.Context, every time.Duration, log *slog.Logger, what string, requeue func(context.Context) (int, error)) error {
	return service.Every(ctx, every, func(ctx context.Context) {
		n, err := requeue(ctx)
		if err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "requeue "+what, "error", err)
		}
		if n > 0 {
			log.InfoContext(ctx, "requeued "+what, "count", n)
		}
	})
}
