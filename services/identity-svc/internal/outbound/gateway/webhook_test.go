package gateway_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/gateway"
)

var _ = Describe("a webhook-style gateway notification", func() {
	const secret = "s3cret"
	body := []byte(`{"id":"evt_1","type":"payment.succeeded","data":{"checkout_id":"chk_1","card_last4":"4242"}}`)
	now := time.Now()
	gw := gateway.NewWebhook(gateway.WebhookOptions{Secret: secret})

	It("is accepted with a fresh signature over its exact body", func() {
		n, err := gw.ParseNotification(gateway.Sign(secret, body, now), body, now)
		Expect(err).NotTo(HaveOccurred())
		Expect(n.Authority).To(Equal("chk_1"))
		Expect(n.Outcome).To(Equal(billing.Outcome{Paid: true, Ref: "evt_1", CardLast4: "4242"}))
	})

	It("accepts any of several signatures, as during a secret rotation", func() {
		header := gateway.Sign("old", body, now) + ",v1=" + gateway.Sign(secret, body, now)[len("t=1234567890,v1="):]
		Expect(gateway.VerifySignature(secret, header, body, now)).To(Succeed())
	})

	DescribeTable("is refused as unauthenticated",
		func(header func() string) {
			_, err := gw.ParseNotification(header(), body, now)
			Expect(apperr.KindOf(err)).To(Equal(apperr.Unauthenticated))
		},
		Entry("without a signature", func() string { return "" }),
		Entry("signed with another secret", func() string { return gateway.Sign("other", body, now) }),
		Entry("signed over another body", func() string { return gateway.Sign(secret, []byte(`{}`), now) }),
		Entry("signed too long ago", func() string { return gateway.Sign(secret, body, now.Add(-6*time.Minute)) }),
		Entry("signed in the future", func() string { return gateway.Sign(secret, body, now.Add(6*time.Minute)) }),
		Entry("with a malformed header", func() string { return "t=abc,v1=zz" }),
	)

	It("refuses an unknown event type as invalid", func() {
		bad := []byte(`{"id":"evt_1","type":"payment.maybe","data":{"checkout_id":"chk_1"}}`)
		_, err := gw.ParseNotification(gateway.Sign(secret, bad, now), bad, now)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
	})
})
