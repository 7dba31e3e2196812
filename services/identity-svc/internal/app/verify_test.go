package app_test

import (
	"net/http"
	"strings"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// sentMessage is a message of the development notifier, read from notification_outbox.
type sentMessage struct {
	Channel, Kind, Body, Token, Code string
}

// sentMessages are the messages sent to recipient of kind, oldest first.
func sentMessages(recipient, kind string) []sentMessage {
	GinkgoHelper()
	var out []sentMessage
	Expect(testDB().Raw(`SELECT channel, kind, body, data->>'token' AS token, COALESCE(data->>'code', '') AS code
		FROM notification_outbox WHERE recipient = ? AND kind = ? ORDER BY created_at`, recipient, kind).Scan(&out).Error).To(Succeed())
	return out
}

// lastMessage is the newest message to recipient of kind.
func lastMessage(recipient, kind string) sentMessage {
	GinkgoHelper()
	list := sentMessages(recipient, kind)
	Expect(list).NotTo(BeEmpty(), "no %s message to %s", kind, recipient)
	return list[len(list)-1]
}

func uniquePhone() string {
	return "+4915" + strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, uuid.NewString())[:9]
}

var _ = Describe("verifying email and phone", func() {
	var (
		c            authClient
		email, phone string
		userID       string
	)
	BeforeEach(func() {
		c = newAuthClient()
		slug := authTenant()
		email = "v" + strings.ReplaceAll(uuid.NewString(), "-", "")[:10] + "@example.test"
		phone = uniquePhone()
		status, body := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": slug, "email": email, "phone_number": phone, "password": authPassword})
		Expect(status).To(Equal(http.StatusCreated))
		userID = body["user_id"].(string)
	})

	It("sends a code by email and by SMS on registration and accepts each once", func() {
		mail := lastMessage(email, "verify-email")
		Expect(mail.Channel).To(Equal("email"))
		Expect(mail.Body).To(ContainSubstring(mail.Code))
		sms := lastMessage(phone, "verify-phone")
		Expect(sms.Channel).To(Equal("sms"))

		status, body := c.do("POST", "/v1/auth/verify/email", "", map[string]any{"token": mail.Token, "code": mail.Code})
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(Equal(map[string]any{"user_id": userID, "email_verified": true, "phone_verified": false}))

		status, body = c.do("POST", "/v1/auth/verify/email", "", map[string]any{"token": mail.Token, "code": mail.Code})
		Expect(status).To(Equal(http.StatusBadRequest), "a code is single use")
		Expect(body).To(HaveKeyWithValue("code", "token_invalid"))

		status, _ = c.do("POST", "/v1/auth/verify/email", "", map[string]any{"token": sms.Token, "code": sms.Code})
		Expect(status).To(Equal(http.StatusBadRequest), "a phone challenge does not verify an email")
		status, body = c.do("POST", "/v1/auth/verify/phone", "", map[string]any{"token": sms.Token, "code": sms.Code})
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(HaveKeyWithValue("phone_verified", true))
	})

	It("burns the code after five wrong attempts", func() {
		mail := lastMessage(email, "verify-email")
		wrong := "000000"
		if mail.Code == wrong {
			wrong = "111111"
		}
		for range 5 {
			status, body := c.do("POST", "/v1/auth/verify/email", "", map[string]any{"token": mail.Token, "code": wrong})
			Expect(status).To(Equal(http.StatusBadRequest))
			Expect(body).To(HaveKeyWithValue("code", "wrong_code"))
		}
		status, body := c.do("POST", "/v1/auth/verify/email", "", map[string]any{"token": mail.Token, "code": mail.Code})
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body).To(HaveKeyWithValue("code", "token_invalid"))
	})

	It("refuses a missing code with 400", func() {
		status, _ := c.do("POST", "/v1/auth/verify/phone", "", map[string]any{"token": "x", "code": ""})
		Expect(status).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("resetting a forgotten password", func() {
	var (
		c   authClient
		acc authAccount
		tok authTokens
	)
	BeforeEach(func() {
		c = newAuthClient()
		acc = authRegister(c)
		tok = authLogin(c, acc, "Laptop")
	})

	It("answers 202 for known and unknown accounts, and sends a link only to the known one", func() {
		status, _ := c.do("POST", "/v1/auth/password/reset/request", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email})
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(func() []sentMessage { return sentMessages(acc.Email, "reset") }).Should(HaveLen(1))

		nobody := "nobody-" + uuid.NewString() + "@example.test"
		status, _ = c.do("POST", "/v1/auth/password/reset/request", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": nobody})
		Expect(status).To(Equal(http.StatusAccepted))
		status, _ = c.do("POST", "/v1/auth/password/reset/request", "", map[string]any{"tenant_slug": "no-such-tenant", "email": acc.Email})
		Expect(status).To(Equal(http.StatusAccepted))
		status, _ = c.do("POST", "/v1/auth/password/reset/request", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email})
		Expect(status).To(Equal(http.StatusAccepted))
		// Requests are answered in order, so once the last one is sent the earlier ones were handled.
		Eventually(func() []sentMessage { return sentMessages(acc.Email, "reset") }).Should(HaveLen(2))
		Expect(sentMessages(nobody, "reset")).To(BeEmpty())
	})

	It("sets the new password once with the link's token and revokes every session", func() {
		c.do("POST", "/v1/auth/password/reset/request", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email})
		Eventually(func() []sentMessage { return sentMessages(acc.Email, "reset") }).Should(HaveLen(1))
		link := lastMessage(acc.Email, "reset")
		Expect(link.Body).To(ContainSubstring(link.Token))

		status, body := c.do("POST", "/v1/auth/password/reset/confirm", "", map[string]any{"token": link.Token, "new_password": "brand-new-password"})
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(HaveKeyWithValue("password_changed", true))
		status, _ = c.do("GET", "/v1/auth/sessions", tok.Access, nil)
		Expect(status).To(Equal(http.StatusUnauthorized))

		status, _ = c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": "brand-new-password"})
		Expect(status).To(Equal(http.StatusOK))
		status, body = c.do("POST", "/v1/auth/password/reset/confirm", "", map[string]any{"token": link.Token, "new_password": "another-new-password"})
		Expect(status).To(Equal(http.StatusBadRequest), "the token is single use")
		Expect(body).To(HaveKeyWithValue("code", "token_invalid"))
	})

	It("refuses a short password and a request without email or phone with 400", func() {
		status, _ := c.do("POST", "/v1/auth/password/reset/confirm", "", map[string]any{"token": "whatever", "new_password": "short"})
		Expect(status).To(Equal(http.StatusBadRequest))
		status, _ = c.do("POST", "/v1/auth/password/reset/request", "", map[string]any{"tenant_slug": acc.TenantSlug})
		Expect(status).To(Equal(http.StatusBadRequest))
	})

	It("limits requests per account with 429", func() {
		var last int
		for i := 0; i < 10 && last != http.StatusTooManyRequests; i++ {
			r := client.Do("POST", "/v1/auth/password/reset/request", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email}, "X-Forwarded-For", authIP())
			last = r.Status
		}
		Expect(last).To(Equal(http.StatusTooManyRequests))
	})
})
