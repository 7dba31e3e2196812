package store_test

import (
	"context"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
)

var _ = Describe("password-reset jobs", func() {
	var (
		ctx    context.Context
		resets *store.ResetJobs
	)
	BeforeEach(func() {
		ctx = context.Background()
		resets = store.NewResetJobs(db)
		Expect(db.Exec("DELETE FROM password_reset_jobs").Error).To(Succeed())
	})

	It("leases a request to one worker at a time, and deletes it when that worker finishes", func() {
		email := "reset-" + uuid.NewString() + "@example.test"
		Expect(resets.Add(ctx, auth.ResetJob{ID: uuid.NewString(), TenantSlug: "acme", Email: email, CreatedAt: time.Now()})).To(Succeed())

		j, l, err := resets.Next(ctx, "worker-a", time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(j.Email).To(Equal(email))
		Expect(j.TenantSlug).To(Equal("acme"))
		_, _, err = resets.Next(ctx, "worker-b", time.Minute)
		Expect(err).To(MatchError(jobs.ErrNoWork), "the only request is leased")

		Expect(resets.Finish(ctx, l)).To(Succeed())
		var n int64
		Expect(db.Raw("SELECT count(*) FROM password_reset_jobs WHERE email = ?", email).Scan(&n).Error).To(Succeed())
		Expect(n).To(BeZero())
	})

	It("queues again a request whose worker's lease lapsed, and refuses that worker's finish", func() {
		Expect(resets.Add(ctx, auth.ResetJob{ID: uuid.NewString(), TenantSlug: "acme", Email: "lapsed@example.test", CreatedAt: time.Now()})).To(Succeed())
		_, dead, err := resets.Next(ctx, "worker-a", 10*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())

		Eventually(func() (int, error) { return resets.Requeue(ctx, time.Now(), time.Minute, 10) }).Should(Equal(1))
		j, l, err := resets.Next(ctx, "worker-b", time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(j.Email).To(Equal("lapsed@example.test"))
		Expect(l.Attempt).To(Equal(2))

		Expect(resets.Finish(ctx, dead)).To(MatchError(jobs.ErrLeaseLost))
		Expect(resets.Finish(ctx, l)).To(Succeed())
	})
})
