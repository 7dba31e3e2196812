package app_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// pushKeys are the keys a browser sends with a subscription.
func pushKeys() map[string]any {
	GinkgoHelper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	return map[string]any{
		"p256dh": base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()),
		"auth":   base64.RawURLEncoding.EncodeToString(secret),
	}
}

func pushCount(userID string) int {
	GinkgoHelper()
	var n int
	Expect(testDB().Raw("SELECT count(*) FROM push_subscriptions WHERE user_id = ?", userID).Scan(&n).Error).To(Succeed())
	return n
}

var _ = Describe("push subscriptions", func() {
	var (
		c   authClient
		acc authAccount
		tok authTokens
	)
	BeforeEach(func() {
		c = newAuthClient()
		acc = authRegister(c)
		tok = authLogin(c, acc, "Browser")
	})

	It("stores a subscription per endpoint and removes one or all", func() {
		ep1 := "https://push.example.test/send/" + uuid.NewString()
		ep2 := "https://push.example.test/send/" + uuid.NewString()
		status, body := c.do("POST", "/v1/auth/push/subscribe", tok.Access, map[string]any{"endpoint": ep1, "keys": pushKeys(), "user_agent": "Firefox"})
		Expect(status).To(Equal(http.StatusCreated))
		Expect(body).To(HaveKeyWithValue("endpoint", ep1))
		Expect(body).To(HaveKeyWithValue("user_agent", "Firefox"))
		status, _ = c.do("POST", "/v1/auth/push/subscribe", tok.Access, map[string]any{"endpoint": ep1, "keys": pushKeys()})
		Expect(status).To(Equal(http.StatusCreated), "subscribing again refreshes the keys")
		c.do("POST", "/v1/auth/push/subscribe", tok.Access, map[string]any{"endpoint": ep2, "keys": pushKeys()})
		Expect(pushCount(acc.ID)).To(Equal(2))

		status, _ = c.do("POST", "/v1/auth/push/unsubscribe", tok.Access, map[string]any{"endpoint": ep1})
		Expect(status).To(Equal(http.StatusNoContent))
		Expect(pushCount(acc.ID)).To(Equal(1))
		status, _ = c.do("POST", "/v1/auth/push/unsubscribe", tok.Access, nil)
		Expect(status).To(Equal(http.StatusNoContent))
		Expect(pushCount(acc.ID)).To(BeZero())
	})

	It("moves an endpoint to the user who subscribes it last, and never removes another user's", func() {
		other := authRegister(c)
		otherTok := authLogin(c, other, "Browser")
		ep := "https://push.example.test/send/" + uuid.NewString()
		c.do("POST", "/v1/auth/push/subscribe", tok.Access, map[string]any{"endpoint": ep, "keys": pushKeys()})
		status, _ := c.do("POST", "/v1/auth/push/unsubscribe", otherTok.Access, map[string]any{"endpoint": ep})
		Expect(status).To(Equal(http.StatusNoContent))
		Expect(pushCount(acc.ID)).To(Equal(1))
		c.do("POST", "/v1/auth/push/subscribe", otherTok.Access, map[string]any{"endpoint": ep, "keys": pushKeys()})
		Expect(pushCount(acc.ID)).To(BeZero())
		Expect(pushCount(other.ID)).To(Equal(1))
	})

	It("refuses a non-https endpoint and malformed keys with 400, and callers without a token", func() {
		status, body := c.do("POST", "/v1/auth/push/subscribe", tok.Access, map[string]any{
			"endpoint": "http://push.example.test/x", "keys": map[string]any{"p256dh": "AAAA", "auth": "short"},
		})
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body["errors"]).To(ContainElements(HaveKeyWithValue("field", "endpoint"), HaveKeyWithValue("field", "keys.p256dh"), HaveKeyWithValue("field", "keys.auth")))
		status, _ = c.do("POST", "/v1/auth/push/subscribe", "", map[string]any{"endpoint": "https://push.example.test/x", "keys": pushKeys()})
		Expect(status).To(Equal(http.StatusUnauthorized))
	})
})
