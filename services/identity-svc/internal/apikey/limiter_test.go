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

var _ = Describe("rate-limiting keys locally with batches from Redis", func() {
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
