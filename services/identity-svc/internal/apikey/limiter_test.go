package apikey_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/identity-svc/internal/apikey"
)

// sharedLimiter leases from a GCRA limiter in Redis, as the service does.
type sharedLimiter struct{ l *redisx.Limiter }

func (s sharedLimiter) Take(ctx context.Context, key string, perMinute, n int) (int, time.Duration, error) {
	return s.l.Take(ctx, key, redisx.PerMinute(perMinute), n)
}

// countingLimiter records the batches asked of the shared limiter.
type countingLimiter struct {
	sharedLimiter
	asked *[]int
}

func (c countingLimiter) Take(ctx context.Context, key string, perMinute, n int) (int, time.Duration, error) {
	*c.asked = append(*c.asked, n)
	return c.sharedLimiter.Take(ctx, key, perMinute, n)
}

var _ = Describe("rate-limiting keys locally with batches from Redis", func() {
	It("costs a key seen a few times per lease one round trip per lease, in batches sized by its rate", func() {
		rdb, prefix := testkit.Redis("apikey")
		var asked []int
		now := time.Now()
		limiter := apikey.NewLocalLimiter(countingLimiter{sharedLimiter{redisx.NewLimiter(rdb, prefix)}, &asked}, func() time.Time { return now })
		ctx := context.Background()

		for range 3 {
			Expect(limiter.Allow(ctx, "apikey:busy", 100000)).To(Succeed())
		}
		Expect(asked).To(Equal([]int{100}), "a first batch of 1/1000 of the rate")
		now = now.Add(apikey.LeaseTTL)
		for range 3 {
			Expect(limiter.Allow(ctx, "apikey:busy", 100000)).To(Succeed())
		}
		Expect(asked).To(Equal([]int{100, 6}), "after an expired lease, twice what it spent")

		asked = nil
		for range 7 {
			Expect(limiter.Allow(ctx, "apikey:slow", 600)).To(Succeed())
		}
		Expect(asked).To(Equal([]int{1, 2, 4}), "a low rate starts at one event and doubles while leases are used up")
		for range 12 {
			Expect(limiter.Allow(ctx, "apikey:slow", 600)).To(Succeed())
		}
		Expect(asked).To(Equal([]int{1, 2, 4, 6, 6}), "never above 1/100 of the rate")
	})

	It("never lets two replicas together exceed a key's rate by more than 10 %, nor starve it", func() {
		rdb, prefix := testkit.Redis("apikey")
		shared := sharedLimiter{redisx.NewLimiter(rdb, prefix)}
		replicas := []*apikey.LocalLimiter{apikey.NewLocalLimiter(shared, time.Now), apikey.NewLocalLimiter(shared, time.Now)}
		const perMinute = 600
		admitted, refused := 0, 0
		var retry time.Duration
		for i := range 3 * perMinute {
			err := replicas[i%2].Allow(context.Background(), "apikey:k1", perMinute)
			if err == nil {
				admitted++
				continue
			}
			Expect(apperr.KindOf(err)).To(Equal(apperr.RateLimited))
			e, _ := apperr.As(err)
			retry = e.RetryAfter
			refused++
		}
		Expect(admitted).To(BeNumerically("<=", perMinute*110/100))
		Expect(admitted).To(BeNumerically(">=", perMinute*90/100), "leases left unspent cost little")
		Expect(refused).To(BeNumerically(">", 0))
		Expect(retry).To(BeNumerically(">=", time.Second))
		Expect(replicas[0].Allow(context.Background(), "apikey:k2", perMinute)).To(Succeed(), "other keys are apart")
	})
})
