package app_test

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("requesting a password reset while message delivery is stalled", func() {
	It("answers 202 without waiting for the message, which is sent once delivery resumes", func() {
		c := newAuthClient()
		acc := authRegister(c)

		// Holding this lock stalls every insert into the development notifier's table, that is
		// every delivery, until the transaction ends.
		tx := testDB().Begin()
		Expect(tx.Error).NotTo(HaveOccurred())
		Expect(tx.Exec("LOCK TABLE notification_outbox IN EXCLUSIVE MODE").Error).To(Succeed())
		released := false
		release := func() {
			if !released {
				released = true
				Expect(tx.Rollback().Error).To(Succeed())
			}
		}
		DeferCleanup(release)

		answered := make(chan int, 2)
		go func() {
			defer GinkgoRecover()
			status, _ := c.do("POST", "/v1/auth/password/reset/request", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email})
			answered <- status
			status, _ = c.do("POST", "/v1/auth/password/reset/request", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": "nobody-" + uuid.NewString() + "@example.test"})
			answered <- status
		}()
		Eventually(answered).WithTimeout(5*time.Second).Should(Receive(Equal(http.StatusAccepted)), "an existing account")
		Eventually(answered).WithTimeout(5*time.Second).Should(Receive(Equal(http.StatusAccepted)), "an unknown account")
		Expect(sentMessages(acc.Email, "reset")).To(BeEmpty(), "delivery is still stalled")

		release()
		Eventually(func() []sentMessage { return sentMessages(acc.Email, "reset") }).Should(HaveLen(1))
	})
})

var _ = Describe("banning a user who is logged in", func() {
	It("ends the user's sessions at once: the access and refresh tokens stop working", func() {
		c := newAuthClient()
		acc := authRegister(c)
		tok := authLogin(c, acc, "Laptop")
		status, _ := c.do("GET", "/v1/users/me", tok.Access, nil)
		Expect(status).To(Equal(http.StatusOK))

		tenantAdmin := newMember(acc.TenantSlug, "tenant-admin")
		Expect(client.Do("POST", "/v1/users/"+acc.ID+"/ban", tenantAdmin.Token, map[string]any{"reason": "abuse"}).Status).
			To(Equal(http.StatusNoContent))

		status, body := c.do("GET", "/v1/users/me", tok.Access, nil)
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(body).To(HaveKeyWithValue("code", "session_revoked"))
		status, _ = c.do("GET", "/v1/auth/sessions", tok.Access, nil)
		Expect(status).To(Equal(http.StatusUnauthorized))
		status, _ = c.do("POST", "/v1/auth/refresh", "", map[string]any{"refresh_token": tok.Refresh})
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("GET", "/v1/users/me", tenantAdmin.Token, nil).Status).To(Equal(http.StatusOK), "only the banned user's sessions end")
	})
})

var _ = Describe("required ids in request bodies", func() {
	It("answers 400 naming the field when a required uuid is missing, instead of 404", func() {
		c := newAuthClient()
		acc := authRegister(c)
		tok := authLogin(c, acc, "Laptop")
		status, body := c.do("POST", "/v1/auth/mfa/verify", tok.Access, map[string]any{"code": "123456"})
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body["errors"]).To(ContainElement(HaveKeyWithValue("field", "factor_id")))

		status, body = c.do("POST", "/v1/users/me/plan/purchase", tok.Access, map[string]any{"gateway": "Balance"})
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body["errors"]).To(ContainElement(HaveKeyWithValue("field", "plan_id")))

		r := client.Do("POST", "/v1/payments/refund", serviceToken(), map[string]any{"reason": "duplicate"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		var problem map[string]any
		r.JSON(&problem)
		Expect(problem["errors"]).To(ContainElement(HaveKeyWithValue("field", "payment_id")))
	})
})
