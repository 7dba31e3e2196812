package redisx

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Limit allows Rate events per Period with bursts of up to Burst events.
type Limit struct {
	Rate   int
	Burst  int
	Period time.Duration
}

// PerMinute allows n events a minute, all of them at once if they come in a burst.
func PerMinute(n int) Limit { return Limit{Rate: n, Burst: n, Period: time.Minute} }

// PerSecond allows n events a second, all of them at once if they come in a burst.
func PerSecond(n int) Limit { return Limit{Rate: n, Burst: n, Period: time.Second} }

// Result is the outcome of one rate-limited event.
type Result struct {
	// Allowed reports whether the event may happen now.
	Allowed bool
	// Remaining is how many more events would be allowed right now.
	Remaining int
	// RetryAfter is how long to wait before the next event is allowed; zero when Allowed.
	RetryAfter time.Duration
	// ResetAfter is how long until the key is back to a full burst.
	ResetAfter time.Duration
}

// Limiter counts events per key in Redis using the generic cell rate algorithm, so every
// replica of a service shares the same limits. It is safe for concurrent use.
type Limiter struct {
	limiter *redis_rate.Limiter
	prefix  string
}

// NewLimiter returns a limiter whose keys are prefix+key; redis_rate stores each one under
// "rate:" + prefix + key and lets it expire once the key is back to a full burst.
func NewLimiter(c *redis.Client, prefix string) *Limiter {
	return &Limiter{limiter: redis_rate.NewLimiter(c), prefix: prefix}
}

// Allow records one event for key under lim and reports whether it may happen. A Burst of zero
// means a burst of Rate. It returns Invalid when lim has no positive rate or period and
// Unavailable when Redis does not answer.
func (l *Limiter) Allow(ctx context.Context, key string, lim Limit) (Result, error) {
	if lim.Rate <= 0 || lim.Period <= 0 {
		return Result{}, apperr.Invalidf("rate limit must have a positive rate and period, got %d per %s", lim.Rate, lim.Period)
	}
	if lim.Burst <= 0 {
		lim.Burst = lim.Rate
	}
	res, err := l.limiter.Allow(ctx, l.prefix+key, redis_rate.Limit{Rate: lim.Rate, Burst: lim.Burst, Period: lim.Period})
	if err != nil {
		return Result{}, apperr.Wrap(fmt.Errorf("redisx: allow %s: %w", key, err), apperr.Unavailable, "redis_unavailable", "rate limiter is unavailable")
	}
	out := Result{Allowed: res.Allowed > 0, Remaining: res.Remaining, ResetAfter: res.ResetAfter}
	if !out.Allowed {
		out.RetryAfter = res.RetryAfter
	}
	return out, nil
}

// Take records up to n events for key under lim at once and answers how many it granted (0 to
// n) and, when none, how long to wait for the next. Callers that spend events locally take
// them in batches with it. It returns the errors of Allow.
func (l *Limiter) Take(ctx context.Context, key string, lim Limit, n int) (int, time.Duration, error) {
	if lim.Rate <= 0 || lim.Period <= 0 || n < 1 {
		return 0, 0, apperr.Invalidf("rate limit must have a positive rate, period and batch, got %d per %s, %d", lim.Rate, lim.Period, n)
	}
	if lim.Burst <= 0 {
		lim.Burst = lim.Rate
	}
	res, err := l.limiter.AllowAtMost(ctx, l.prefix+key, redis_rate.Limit{Rate: lim.Rate, Burst: lim.Burst, Period: lim.Period}, n)
	if err != nil {
		return 0, 0, apperr.Wrap(fmt.Errorf("redisx: take %s: %w", key, err), apperr.Unavailable, "redis_unavailable", "rate limiter is unavailable")
	}
	if res.Allowed > 0 {
		return res.Allowed, 0, nil
	}
	return 0, res.RetryAfter, nil
}

// Check is Allow for callers that only need a verdict: it returns nil when the event may
// happen and a RateLimited error carrying RetryAfter otherwise. It also returns the errors of
// Allow.
func (l *Limiter) Check(ctx context.Context, key string, lim Limit) error {
	res, err := l.Allow(ctx, key, lim)
	if err != nil {
		return err
	}
	if res.Allowed {
		return nil
	}
	seconds := max(1, int(math.Ceil(res.RetryAfter.Seconds())))
	e := apperr.E(apperr.RateLimited, "", fmt.Sprintf("too many requests; retry after %d seconds", seconds))
	e.RetryAfter = time.Duration(seconds) * time.Second
	return e
}
