package webhook_test

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/motionstudio/platform/services/identity-svc/internal/webhook"
)

var _ = Describe("signing a delivery", func() {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

	It("produces headers the official Standard Webhooks library verifies", func() {
		body := []byte(`{"id":"evt_1","type":"user.banned","data":{}}`)
		headers, err := webhook.Sign(secret, "evt_1", time.Now(), body)
		Expect(err).NotTo(HaveOccurred())
		h := http.Header{}
		for k, v := range headers {
			h.Set(k, v)
		}
		wh, err := standardwebhooks.NewWebhook(secret)
		Expect(err).NotTo(HaveOccurred())
		Expect(wh.Verify(body, h)).To(Succeed())

		want, err := wh.Sign("evt_1", time.Unix(1700000000, 0), body)
		Expect(err).NotTo(HaveOccurred())
		got, err := webhook.Sign(secret, "evt_1", time.Unix(1700000000, 0), body)
		Expect(err).NotTo(HaveOccurred())
		Expect(got["webhook-signature"]).To(Equal(want))
	})

	It("is refused under another secret or for another body", func() {
		body := []byte(`{}`)
		headers, err := webhook.Sign(secret, "evt_2", time.Now(), body)
		Expect(err).NotTo(HaveOccurred())
		h := http.Header{}
		for k, v := range headers {
			h.Set(k, v)
		}
		other, err := standardwebhooks.NewWebhook("whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=")
		Expect(err).NotTo(HaveOccurred())
		Expect(other.Verify(body, h)).NotTo(Succeed())
		wh, err := standardwebhooks.NewWebhook(secret)
		Expect(err).NotTo(HaveOccurred())
		Expect(wh.Verify([]byte(`{"x":1}`), h)).NotTo(Succeed())
	})
})
