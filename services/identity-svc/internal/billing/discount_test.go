package billing_test

import (
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
)

var _ = Describe("a discount", func() {
	monthly := &billing.Plan{ID: "m", PriceMinor: 999, BillingPeriod: "Monthly"}
	quarterly := &billing.Plan{ID: "q", PriceMinor: 2999, BillingPeriod: "Quarterly"}
	yearly := &billing.Plan{ID: "y", PriceMinor: 12000, BillingPeriod: "Yearly"}

	DescribeTable("takes off the price in minor units, never more than the price",
		func(kind string, value float64, plan *billing.Plan, minor int64, seconds int) {
			d := &billing.Discount{Kind: kind, Value: value}
			gotMinor, gotSeconds := d.Apply(plan)
			Expect(gotMinor).To(Equal(minor))
			Expect(gotSeconds).To(Equal(seconds))
		},
		Entry("a percentage rounds down", billing.KindPercentage, 12.5, monthly, int64(124), 0),
		Entry("a whole percentage", billing.KindPercentage, 100.0, monthly, int64(999), 0),
		Entry("a percentage of a large price does not overflow", billing.KindPercentage, 50.0,
			&billing.Plan{PriceMinor: math.MaxInt64 - 1}, int64((math.MaxInt64-1)/2), 0),
		Entry("a fixed amount", billing.KindFixedAmount, 300.0, monthly, int64(300), 0),
		Entry("a fixed amount above the price", billing.KindFixedAmount, 5000.0, monthly, int64(999), 0),
		Entry("free months of a yearly plan", billing.KindFreeMonths, 2.0, yearly, int64(2000), 0),
		Entry("free months of a quarterly plan round the monthly price down", billing.KindFreeMonths, 1.0, quarterly, int64(999), 0),
		Entry("more free months than the period", billing.KindFreeMonths, 4.0, quarterly, int64(2999), 0),
		Entry("render credits reduce nothing", billing.KindRenderCredits, 600.0, monthly, int64(0), 600),
	)

	It("says why it does not apply", func() {
		now := time.Now()
		later, earlier := now.Add(time.Hour), now.Add(-time.Hour)
		one := 1
		Expect((&billing.Discount{StartsAt: &later}).Refusal(now, "")).To(Equal(billing.ReasonNotStarted))
		Expect((&billing.Discount{ExpiresAt: &earlier}).Refusal(now, "")).To(Equal(billing.ReasonExpired))
		Expect((&billing.Discount{ExpiresAt: &now}).Refusal(now, "")).To(Equal(billing.ReasonExpired))
		Expect((&billing.Discount{MaxUseCount: &one, UseCount: 1}).Refusal(now, "")).To(Equal(billing.ReasonExhausted))
		Expect((&billing.Discount{AppliesToPlanIDs: []string{"y"}}).Refusal(now, "m")).To(Equal(billing.ReasonNotApplicable))
		Expect((&billing.Discount{AppliesToPlanIDs: []string{"y"}}).Refusal(now, "y")).To(BeEmpty())
		Expect((&billing.Discount{StartsAt: &earlier, ExpiresAt: &later, MaxUseCount: &one}).Refusal(now, "m")).To(BeEmpty())
	})

	It("validates its fields", func() {
		zero := 0
		d := &billing.Discount{Name: "", Code: "NO SPACES", Kind: billing.KindPercentage, Value: 0, MaxUseCount: &zero}
		Expect(d.Validate()).To(MatchError(ContainSubstring("invalid")))
		Expect((&billing.Discount{Name: "ok", Code: "OK-1", Kind: billing.KindFreeMonths, Value: 2}).Validate()).To(Succeed())
		Expect((&billing.Discount{Name: "ok", Code: "OK-1", Kind: billing.KindFreeMonths, Value: 2.5}).Validate()).NotTo(Succeed())
		Expect((&billing.Discount{Name: "ok", Code: "OK-1", Kind: "Bogus", Value: 2}).Validate()).NotTo(Succeed())
		Expect(billing.NormalizeCode(" spring-25 ")).To(Equal("SPRING-25"))
	})
})
