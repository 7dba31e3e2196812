package app_test

import (
	"encoding/json"
	"net"
	"net/http"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

var _ = Describe("tenant webhooks", func() {
	var (
		tenantA, tenantB string
		adminA, userA    member
		adminB           member
	)

	BeforeEach(func() {
		var slugA, slugB string
		tenantA, slugA = newTenant("hooka")
		tenantB, slugB = newTenant("hookb")
		adminA = newMember(slugA, "tenant-admin")
		userA = newMember(slugA, "")
		adminB = newMember(slugB, "tenant-admin")
	})

	It("delivers the tenant's events signed per Standard Webhooks and records the attempt", func() {
		recv := newReceiver()
		id, secret := subscribe(adminA, tenantA, recv.srv.URL+"/hooks", "api_key.created", "user.banned")
		Expect(secret).To(MatchRegexp(`^whsec_[A-Za-z0-9+/]{32}$`))
		list := client.Do("GET", "/v1/tenants/"+tenantA+"/webhooks", adminA.Token, nil)
		Expect(string(list.Body)).NotTo(ContainSubstring(secret[6:]))

		keyID := createKey(adminA, tenantA)
		Eventually(recv.requests).WithTimeout(15 * time.Second).Should(HaveLen(1))
		got := recv.requests()[0]
		verifier, err := standardwebhooks.NewWebhook(secret)
		Expect(err).NotTo(HaveOccurred())
		Expect(verifier.Verify(got.Body, got.Header)).To(Succeed())
		Expect(verifier.Verify(append(got.Body, ' '), got.Header)).NotTo(Succeed())

		var body struct {
			ID   string         `json:"id"`
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		Expect(json.Unmarshal(got.Body, &body)).To(Succeed())
		Expect(body.Type).To(Equal("api_key.created"))
		Expect(body.ID).To(Equal(got.Header.Get("webhook-id")))
		Expect(body.Data).To(HaveKeyWithValue("api_key_id", keyID))
		Expect(body.Data).To(HaveKeyWithValue("tenant_id", tenantA))

		Eventually(func() []map[string]any { return deliveryAttempts(adminA, tenantA, id) }).Should(HaveLen(1))
		a := deliveryAttempts(adminA, tenantA, id)[0]
		Expect(a).To(HaveKeyWithValue("succeeded", true))
		Expect(a).To(HaveKeyWithValue("response_status", 200.0))
		Expect(a).To(HaveKeyWithValue("attempt", 1.0))
		Expect(a).To(HaveKeyWithValue("event_type", "api_key.created"))
		Expect(a["delivered_at"]).NotTo(BeNil())
		w := webhookOf(adminA, tenantA, id)
		Expect(w).To(HaveKeyWithValue("last_status_code", 200.0))
		Expect(w).To(HaveKeyWithValue("consecutive_failures", 0.0))
	})

	It("delivers only events of the webhook's own tenant and subscription", func() {
		recvB := newReceiver()
		subscribe(adminB, tenantB, recvB.srv.URL, "api_key.created")
		createKey(adminA, tenantA)
		client.Do("PATCH", "/v1/tenants/"+tenantB, adminB.Token, map[string]any{"name": "B renamed"})
		keyB := createKey(adminB, tenantB)
		Eventually(recvB.requests).WithTimeout(15 * time.Second).Should(HaveLen(1))
		var body struct {
			Data map[string]any `json:"data"`
		}
		Expect(json.Unmarshal(recvB.requests()[0].Body, &body)).To(Succeed())
		Expect(body.Data).To(HaveKeyWithValue("api_key_id", keyB))
	})

	It("retries after 500s with the same message id, honouring Retry-After, and resets the failure count on success", func() {
		recv := newReceiver(reply{status: 500}, reply{status: 503, retryAfter: "2"}, reply{status: 200})
		id, secret := subscribe(adminA, tenantA, recv.srv.URL, "api_key.created")
		createKey(adminA, tenantA)
		Eventually(recv.requests).WithTimeout(20 * time.Second).Should(HaveLen(3))
		reqs := recv.requests()
		verifier, err := standardwebhooks.NewWebhook(secret)
		Expect(err).NotTo(HaveOccurred())
		for _, r := range reqs {
			Expect(verifier.Verify(r.Body, r.Header)).To(Succeed())
			Expect(r.Header.Get("webhook-id")).To(Equal(reqs[0].Header.Get("webhook-id")))
		}
		Expect(reqs[2].At.Sub(reqs[1].At)).To(BeNumerically(">=", 2*time.Second))

		Eventually(func() []map[string]any { return deliveryAttempts(adminA, tenantA, id) }).Should(HaveLen(3))
		list := deliveryAttempts(adminA, tenantA, id)
		Expect(list[0]).To(HaveKeyWithValue("attempt", 3.0))
		Expect(list[0]).To(HaveKeyWithValue("succeeded", true))
		Expect(list[2]).To(HaveKeyWithValue("response_status", 500.0))
		Expect(list[2]).To(HaveKeyWithValue("succeeded", false))
		Expect(webhookOf(adminA, tenantA, id)).To(HaveKeyWithValue("consecutive_failures", 0.0))
	})

	It("lists an attempt whose worker died before recording it, once the message is retried", func() {
		recv := newReceiver()
		id, _ := subscribe(adminA, tenantA, recv.srv.URL, "api_key.created")
		// What a worker killed between sending and recording leaves behind: the message
		// claimed (attempt 1), its lease run out, no attempt recorded.
		messageID, eventID := uuid.NewString(), uuid.NewString()
		Expect(testDB().Exec(`INSERT INTO webhook_messages (id, webhook_id, tenant_id, event_id, event_type, body, status,
			attempt, queued_at, lease_until, created_at) VALUES (?, ?, ?, ?, 'api_key.created', '{}', 'Processing', 1, now(),
			now() - interval '1 minute', now())`, messageID, id, tenantA, eventID).Error).To(Succeed())

		Eventually(recv.requests).WithTimeout(15 * time.Second).Should(HaveLen(1))
		Expect(recv.requests()[0].Header.Get("webhook-id")).To(Equal(eventID))
		Eventually(func() []map[string]any { return deliveryAttempts(adminA, tenantA, id) }).Should(HaveLen(2))
		list := deliveryAttempts(adminA, tenantA, id)
		Expect(list[0]).To(HaveKeyWithValue("attempt", 2.0))
		Expect(list[0]).To(HaveKeyWithValue("succeeded", true))
		Expect(list[1]).To(HaveKeyWithValue("attempt", 1.0))
		Expect(list[1]).To(HaveKeyWithValue("succeeded", false))
		Expect(list[1]).To(HaveKeyWithValue("response_status", BeNil()))
		Expect(list[1]["error_message"]).To(ContainSubstring("stopped before it recorded"))
	})

	It("counts consecutive failures and gives up after the last retry", func() {
		replies := make([]reply, 8)
		for i := range replies {
			replies[i] = reply{status: 500}
		}
		recv := newReceiver(replies...)
		id, _ := subscribe(adminA, tenantA, recv.srv.URL, "api_key.created")
		createKey(adminA, tenantA)
		Eventually(recv.requests).WithTimeout(20 * time.Second).Should(HaveLen(8))
		Eventually(func() any { return webhookOf(adminA, tenantA, id)["consecutive_failures"] }).Should(Equal(8.0))
		Consistently(recv.requests).WithTimeout(time.Second).Should(HaveLen(8))
		Expect(webhookOf(adminA, tenantA, id)).To(HaveKeyWithValue("is_active", true))
	})

	It("fails a delivery refused for its destination at once, with the reason, instead of retrying", func() {
		recv := newReceiver()
		id, _ := subscribe(adminA, tenantA, recv.srv.URL, "api_key.created")
		// The host now resolves, or was changed, to the cloud metadata address.
		Expect(testDB().Exec("UPDATE webhooks SET url = 'http://169.254.169.254/latest/meta-data' WHERE id = ?", id).Error).To(Succeed())
		createKey(adminA, tenantA)
		Eventually(func() []map[string]any { return deliveryAttempts(adminA, tenantA, id) }).WithTimeout(10 * time.Second).Should(HaveLen(1))
		Consistently(func() []map[string]any { return deliveryAttempts(adminA, tenantA, id) }).WithTimeout(time.Second).Should(HaveLen(1))
		a := deliveryAttempts(adminA, tenantA, id)[0]
		Expect(a).To(HaveKeyWithValue("succeeded", false))
		Expect(a).To(HaveKeyWithValue("error_message", "The server's address is not allowed."))
		Expect(a["error_message"]).NotTo(ContainSubstring("169.254"))
		var status string
		Expect(testDB().Raw("SELECT status FROM webhook_messages WHERE webhook_id = ?", id).Scan(&status).Error).To(Succeed())
		Expect(status).To(Equal("Failed"))
		Expect(recv.requests()).To(BeEmpty())
	})

	It("logs a delivery to a closed port as a refused connection, without the address", func() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		closed := "http://" + l.Addr().String() + "/hook"
		Expect(l.Close()).To(Succeed())
		id, _ := subscribe(adminA, tenantA, closed, "api_key.created")
		createKey(adminA, tenantA)
		Eventually(func() []map[string]any { return deliveryAttempts(adminA, tenantA, id) }).WithTimeout(10 * time.Second).ShouldNot(BeEmpty())
		a := deliveryAttempts(adminA, tenantA, id)[0]
		Expect(a).To(HaveKeyWithValue("succeeded", false))
		Expect(a).To(HaveKeyWithValue("error_message", "connection refused"))
		var stored []string
		Expect(testDB().Raw("SELECT error_message FROM webhook_deliveries WHERE webhook_id = ?", id).Scan(&stored).Error).To(Succeed())
		Expect(stored).NotTo(BeEmpty())
		for _, msg := range stored {
			Expect(msg).NotTo(MatchRegexp(`\d+\.\d+\.\d+\.\d+`), "no address in the stored log")
		}
	})

	It("disables a webhook that answers 410 Gone", func() {
		recv := newReceiver(reply{status: http.StatusGone})
		id, _ := subscribe(adminA, tenantA, recv.srv.URL, "api_key.created")
		createKey(adminA, tenantA)
		Eventually(func() any { return webhookOf(adminA, tenantA, id)["is_active"] }).WithTimeout(15 * time.Second).Should(BeFalse())
		Expect(webhookOf(adminA, tenantA, id)["disabled_reason"]).To(ContainSubstring("410"))
		createKey(adminA, tenantA)
		Consistently(recv.requests).WithTimeout(time.Second).Should(HaveLen(1))
	})

	It("disables a webhook that has failed for five days", func() {
		recv := newReceiver(reply{status: 500})
		id, _ := subscribe(adminA, tenantA, recv.srv.URL, "api_key.created")
		Expect(testDB().Exec("UPDATE webhooks SET failing_since = now() - interval '6 days', consecutive_failures = 40 WHERE id = ?", id).Error).To(Succeed())
		createKey(adminA, tenantA)
		Eventually(func() any { return webhookOf(adminA, tenantA, id)["is_active"] }).WithTimeout(15 * time.Second).Should(BeFalse())
		Expect(webhookOf(adminA, tenantA, id)).To(HaveKeyWithValue("consecutive_failures", 41.0))
	})

	It("refuses bad webhooks and callers who may not manage them, and deletes", func() {
		recv := newReceiver()
		for _, body := range []map[string]any{
			{"name": "", "url": recv.srv.URL, "events": []string{"api_key.created"}},
			{"name": "x", "url": "ftp://example.com/hook", "events": []string{"api_key.created"}},
			{"name": "x", "url": "http://10.1.2.3/hook", "events": []string{"api_key.created"}},
			{"name": "x", "url": recv.srv.URL, "events": []string{}},
			{"name": "x", "url": recv.srv.URL, "events": []string{"user.deleted"}},
		} {
			Expect(client.Do("POST", "/v1/tenants/"+tenantA+"/webhooks", adminA.Token, body).Status).To(Equal(http.StatusBadRequest), "%v", body)
		}
		ok := map[string]any{"name": "x", "url": recv.srv.URL, "events": []string{"api_key.created"}}
		Expect(client.Do("POST", "/v1/tenants/"+tenantA+"/webhooks", userA.Token, ok).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/tenants/"+tenantA+"/webhooks", adminB.Token, ok).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/tenants/"+tenantA+"/webhooks", "", ok).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/webhooks", userA.Token, nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/webhooks", adminB.Token, nil).Status).To(Equal(http.StatusNotFound))

		id, _ := subscribe(adminA, tenantA, recv.srv.URL, "api_key.created")
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/webhooks/"+id+"/deliveries", adminB.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/"+tenantB+"/webhooks/"+id+"/deliveries", adminB.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/webhooks/"+id+"/deliveries", userA.Token, nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantB+"/webhooks/"+id, adminB.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/webhooks/"+id, userA.Token, nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/webhooks/"+id, "", nil).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/webhooks/"+id, adminA.Token, nil).Status).To(Equal(http.StatusNoContent))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/webhooks/"+id, adminA.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/tenants/"+tenantA+"/webhooks/"+id+"/deliveries", adminA.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", "/v1/tenants/"+tenantA+"/webhooks/"+uuid.NewString(), adminA.Token, nil).Status).To(Equal(http.StatusNotFound))
	})
})

// subscribe registers a webhook as who and answers its id and secret.
func subscribe(who member, tenantID, url string, events ...string) (string, string) {
	GinkgoHelper()
	r := client.Do("POST", "/v1/tenants/"+tenantID+"/webhooks", who.Token, map[string]any{"name": "hook", "url": url, "events": events})
	Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
	var w map[string]any
	r.JSON(&w)
	return w["id"].(string), w["secret"].(string)
}

// createKey creates an API key as who, an event webhooks subscribe to, and answers its id.
func createKey(who member, tenantID string) string {
	GinkgoHelper()
	r := client.Do("POST", "/v1/tenants/"+tenantID+"/api-keys", who.Token, map[string]any{"name": "k", "scopes": []string{"renders:read"}})
	Expect(r.Status).To(Equal(http.StatusCreated))
	var k map[string]any
	r.JSON(&k)
	return k["id"].(string)
}

// webhookOf is the webhook as the tenant's list shows it, or nil.
func webhookOf(who member, tenantID, id string) map[string]any {
	GinkgoHelper()
	var list struct {
		Data []map[string]any `json:"data"`
	}
	client.Do("GET", "/v1/tenants/"+tenantID+"/webhooks", who.Token, nil).JSON(&list)
	for _, w := range list.Data {
		if w["id"] == id {
			return w
		}
	}
	return nil
}

// deliveryAttempts lists the webhook's delivery attempts, newest first.
func deliveryAttempts(who member, tenantID, id string) []map[string]any {
	GinkgoHelper()
	var list struct {
		Data []map[string]any `json:"data"`
	}
	r := client.Do("GET", "/v1/tenants/"+tenantID+"/webhooks/"+id+"/deliveries", who.Token, nil)
	Expect(r.Status).To(Equal(http.StatusOK))
	r.JSON(&list)
	return list.Data
}
