package redischallenge_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/redischallenge"
)

var _ = Describe("one-time challenges", func() {
	var (
		ctx   context.Context
		store *redischallenge.Store
		c     auth.Challenge
	)

	BeforeEach(func() {
		ctx = context.Background()
		rdb, prefix := testkit.Redis("challenge")
		store = redischallenge.NewStore(rdb, prefix)
		c = auth.Challenge{Purpose: auth.PurposeVerifyEmail, TokenHash: "t1", CodeHash: "c1", UserID: "u1", TenantID: "t", Target: "a@example.test"}
		Expect(store.Put(ctx, c, time.Hour)).To(Succeed())
	})

	It("is used once", func() {
		got, err := store.Consume(ctx, c.Purpose, "t1", "c1", 5)
		Expect(err).NotTo(HaveOccurred())
		Expect(*got).To(Equal(c))
		_, err = store.Consume(ctx, c.Purpose, "t1", "c1", 5)
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound))
	})

	It("is burnt by too many wrong codes", func() {
		for range 4 {
			_, err := store.Consume(ctx, c.Purpose, "t1", "wrong", 5)
			Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		}
		_, err := store.Consume(ctx, c.Purpose, "t1", "c1", 5)
		Expect(err).NotTo(HaveOccurred(), "four wrong codes leave one more try")

		Expect(store.Put(ctx, c, time.Hour)).To(Succeed())
		for range 5 {
			_, err = store.Consume(ctx, c.Purpose, "t1", "wrong", 5)
			Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		}
		_, err = store.Consume(ctx, c.Purpose, "t1", "c1", 5)
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound), "the fifth wrong code burnt it")
	})

	It("belongs to its purpose", func() {
		_, err := store.Consume(ctx, auth.PurposeReset, "t1", "c1", 5)
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound))
	})

	It("expires", func() {
		short := auth.Challenge{Purpose: auth.PurposeVerifyPhone, TokenHash: "t2", CodeHash: "c2"}
		Expect(store.Put(ctx, short, 100*time.Millisecond)).To(Succeed())
		Eventually(func() apperr.Kind {
			_, err := store.Consume(ctx, short.Purpose, "t2", "probe", 1000)
			return apperr.KindOf(err)
		}).Should(Equal(apperr.NotFound))
	})
})
