package redisx_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/redisx"
)

var _ = Describe("rate limiting", func() {
	var limiter *redisx.Limiter

	BeforeEach(func() {
		limiter = redisx.NewLimiter(client, prefix)
	})

	It("allows a burst, then refuses with a delay before the next attempt", func(ctx SpecContext) {
		lim := redisx.Limit{Rate: 3, Burst: 3, Period: time.Minute}
		for remaining := 2; remaining >= 0; remaining-- {
			res, err := limiter.Allow(ctx, "burst", lim)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Allowed).To(BeTrue())
			Expect(res.Remaining).To(Equal(remaining))
			Expect(res.RetryAfter).To(BeZero())
		}

		res, err := limiter.Allow(ctx, "burst", lim)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Allowed).To(BeFalse())
		Expect(res.Remaining).To(BeZero())
		Expect(res.RetryAfter).To(BeNumerically(">", 0))
		Expect(res.RetryAfter).To(BeNumerically("<=", 20*time.Second))
		Expect(res.ResetAfter).To(BeNumerically(">", 40*time.Second))
	})

	It("takes events in batches, never more than the burst left", func(ctx SpecContext) {
		lim := redisx.Limit{Rate: 5, Burst: 5, Period: time.Hour}
		granted, _, err := limiter.Take(ctx, "batch", lim, 3)
		Expect(err).NotTo(HaveOccurred())
		Expect(granted).To(Equal(3))
		granted, _, err = limiter.Take(ctx, "batch", lim, 3)
		Expect(err).NotTo(HaveOccurred())
		Expect(granted).To(Equal(2), "only what the burst has left")
		granted, retry, err := limiter.Take(ctx, "batch", lim, 3)
		Expect(err).NotTo(HaveOccurred())
		Expect(granted).To(BeZero())
		Expect(retry).To(BeNumerically(">", time.Minute))
	})

	It("keeps separate keys independent", func(ctx SpecContext) {
		lim := redisx.PerMinute(1)
		Expect(limiter.Check(ctx, "key-a", lim)).To(Succeed())
		Expect(limiter.Check(ctx, "key-a", lim)).NotTo(Succeed())
		Expect(limiter.Check(ctx, "key-b", lim)).To(Succeed())
	})

	It("keeps limiters with different prefixes independent", func(ctx SpecContext) {
		lim := redisx.PerMinute(1)
		other := redisx.NewLimiter(client, prefix+"other:")
		Expect(limiter.Check(ctx, "shared", lim)).To(Succeed())
		Expect(other.Check(ctx, "shared", lim)).To(Succeed())
		Expect(limiter.Check(ctx, "shared", lim)).NotTo(Succeed())
	})

	It("answers a refused check with a RateLimited error that says when to retry", func(ctx SpecContext) {
		lim := redisx.PerMinute(2)
		Expect(limiter.Check(ctx, "check", lim)).To(Succeed())
		Expect(limiter.Check(ctx, "check", lim)).To(Succeed())

		err := limiter.Check(ctx, "check", lim)
		e, ok := apperr.As(err)
		Expect(ok).To(BeTrue())
		Expect(e.Kind).To(Equal(apperr.RateLimited))
		Expect(e.RetryAfter).To(BeNumerically(">=", time.Second))
		Expect(e.RetryAfter).To(BeNumerically("<=", 30*time.Second))
		Expect(e.Message).To(MatchRegexp(`^too many requests; retry after \d+ seconds$`))
		Expect(e.Message).To(ContainSubstring("%d seconds", int(e.RetryAfter.Seconds())))
	})

	It("allows again once the period has refilled the bucket", func(ctx SpecContext) {
		lim := redisx.PerSecond(2)
		Expect(limiter.Check(ctx, "refill", lim)).To(Succeed())
		Expect(limiter.Check(ctx, "refill", lim)).To(Succeed())
		Expect(apperr.KindOf(limiter.Check(ctx, "refill", lim))).To(Equal(apperr.RateLimited))

		Eventually(func(ctx SpecContext) error {
			return limiter.Check(ctx, "refill", lim)
		}).WithContext(ctx).WithTimeout(3 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	})

	It("stores its state under the limiter's prefix", func(ctx SpecContext) {
		Expect(limiter.Check(ctx, "stored", redisx.PerMinute(5))).To(Succeed())
		Expect(client.Exists(ctx, "rate:"+prefix+"stored").Val()).To(BeEquivalentTo(1))
	})

	It("rejects a limit without a rate or period", func(ctx SpecContext) {
		_, err := limiter.Allow(ctx, "zero", redisx.Limit{})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
	})
})
