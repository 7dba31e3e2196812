package billing_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
)

var _ = Describe("a refund's effect", func() {
	card := &billing.Payment{Gateway: billing.GatewayRedirect, AmountMinor: 1000}
	balance := &billing.Payment{Gateway: billing.GatewayBalance, AmountMinor: 1000}

	It("credits the balance for a Balance refund, and for an original-method refund of a balance payment", func() {
		Expect((&billing.Refund{RefundTo: billing.RefundToBalance}).CreditsBalance(card)).To(BeTrue())
		Expect((&billing.Refund{RefundTo: billing.RefundToOriginalMethod}).CreditsBalance(balance)).To(BeTrue())
		Expect((&billing.Refund{RefundTo: billing.RefundToOriginalMethod}).CreditsBalance(card)).To(BeFalse())
		Expect((&billing.Refund{RefundTo: billing.RefundToPlan}).CreditsBalance(balance)).To(BeFalse())
	})

	It("gives back the refunded share of the period as plan time", func() {
		r := &billing.Refund{RefundTo: billing.RefundToPlan, AmountMinor: 250}
		Expect(r.PlanTime(card, 40*24*time.Hour)).To(Equal(10 * 24 * time.Hour))
	})
})

var _ = Describe("activating a plan", func() {
	now := time.Now()
	It("supersedes every plan the user still holds, and none that ended", func() {
		cancelled := now.Add(-time.Hour)
		Expect((&billing.UserPlan{ExpiresAt: now.Add(time.Hour)}).SupersededBy(now)).To(BeTrue())
		Expect((&billing.UserPlan{StartsAt: now.Add(time.Hour), ExpiresAt: now.Add(2 * time.Hour)}).SupersededBy(now)).To(BeTrue())
		Expect((&billing.UserPlan{ExpiresAt: now.Add(-time.Minute)}).SupersededBy(now)).To(BeFalse())
		Expect((&billing.UserPlan{ExpiresAt: now.Add(time.Hour), CancelledAt: &cancelled}).SupersededBy(now)).To(BeFalse())
	})
})
