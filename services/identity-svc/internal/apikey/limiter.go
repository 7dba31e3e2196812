package apikey

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Bounds of the local rate limiter.
const (
	// LeaseTTL is how long events taken from the shared limiter may be spent locally; spending
	// them up to this late lets a key exceed its per-minute rate by at most LeaseTTL/1min (8 %).
	LeaseTTL = 5 * time.Second
	// LeaseShare is the largest batch taken at once, as a share of the per-minute rate (1/100).
	LeaseShare = 100
	// MaxLeasedKeys bounds the keys a LocalLimiter remembers; a full map starts over.
	MaxLeasedKeys = 100000
)

// Leaser takes up to n events of key under a per-minute rate from the limiter every replica
// shares, answering how many it granted and, when none, how long to wait.
type Leaser interface {
	Take(ctx context.Context, key string, perMinute, n int) (int, time.Duration, error)
}

// LocalLimiter rate-limits keys in memory with events taken in batches from a shared Leaser,
// so most validations cost no network round trip while every replica together never admits
// more than the shared limiter granted. A key's first batch is 1/(10*LeaseShare) of its rate
// (at least one event); a batch doubles while leases are spent before they expire and is twice
// what the last lease spent when it expired unspent, never above 1/LeaseShare of the rate.
// Safe for concurrent use.
type LocalLimiter struct {
	remote Leaser
	now    func() time.Time

	mu     sync.Mutex
	leases map[string]*lease
}

type lease struct {
	left, size int
	until      time.Time
}

// NewLocalLimiter returns a LocalLimiter over remote.
func NewLocalLimiter(remote Leaser, now func() time.Time) *LocalLimiter {
	return &LocalLimiter{remote: remote, now: now, leases: map[string]*lease{}}
}

// Allow admits one event of key under perMinute. It returns apperr RateLimited (with
// RetryAfter) over the rate and the Leaser's errors.
func (l *LocalLimiter) Allow(ctx context.Context, key string, perMinute int) error {
	now := l.now()
	l.mu.Lock()
	le := l.leases[key]
	if le != nil && le.left > 0 && now.Before(le.until) {
		le.left--
		l.mu.Unlock()
		return nil
	}
	size := nextLeaseSize(le, perMinute)
	l.mu.Unlock()

	granted, retry, err := l.remote.Take(ctx, key, perMinute, size)
	if err != nil {
		return err
	}
	if granted == 0 {
		seconds := max(1, int(math.Ceil(retry.Seconds())))
		e := apperr.E(apperr.RateLimited, "", fmt.Sprintf("too many requests; retry after %d seconds", seconds))
		e.RetryAfter = time.Duration(seconds) * time.Second
		return e
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.leases) >= MaxLeasedKeys {
		clear(l.leases)
	}
	l.leases[key] = &lease{left: granted - 1, size: granted, until: now.Add(LeaseTTL)}
	return nil
}

// nextLeaseSize is the batch to take after the lease le (nil when the key has none): a first
// lease is 1/(10*LeaseShare) of the rate, a lease used up in time is followed by one twice its
// size, and a lease that expired with events left by one twice what it spent, so a key seen a
// few times in LeaseTTL costs one take per LeaseTTL; always between 1 and 1/LeaseShare of the
// rate, which bounds what an unspent lease withholds from the other replicas.
func nextLeaseSize(le *lease, perMinute int) int {
	size := perMinute / (10 * LeaseShare)
	switch {
	case le == nil:
	case le.left > 0:
		size = 2 * (le.size - le.left)
	default:
		size = 2 * le.size
	}
	return min(max(size, 1), max(perMinute/LeaseShare, 1))
}
