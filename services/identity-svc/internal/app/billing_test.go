package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	events "github.com/motionstudio/platform/proto-events"
	paygateway "github.com/motionstudio/platform/services/identity-svc/internal/outbound/gateway"
)

// newPlan seeds an active plan of the tenant and answers its id.
func newPlan(tenantID, scope, period string, price int64) string {
	GinkgoHelper()
	id := uuid.NewString()
	Expect(testDB().Exec(`INSERT INTO plans (id, tenant_id, code, name, description, scope, currency, billing_period,
		price_minor, seconds_charge, storage_gb, parallel_renders, features)
		VALUES (?, ?, ?, ?, 'A plan', ?, 'USD', ?, ?, 3600, 10, 2, '{"watermark": false}')`,
		id, tenantID, "code-"+id[:8], "Plan "+id[:8], scope, period, price).Error).To(Succeed())
	return id
}

func setBalance(userID string, minor int64) {
	GinkgoHelper()
	Expect(testDB().Exec("UPDATE users SET balance_minor = ? WHERE id = ?", minor, userID).Error).To(Succeed())
}

func balanceOf(userID string) int64 {
	GinkgoHelper()
	var b int64
	Expect(testDB().Raw("SELECT balance_minor FROM users WHERE id = ?", userID).Scan(&b).Error).To(Succeed())
	return b
}

func countRows(table, where string, args ...any) int64 {
	GinkgoHelper()
	var n int64
	Expect(testDB().Table(table).Where(where, args...).Count(&n).Error).To(Succeed())
	return n
}

// purchase buys a plan and answers the decoded result.
func purchase(token string, body map[string]any) map[string]any {
	GinkgoHelper()
	r := client.Do("POST", "/v1/users/me/plan/purchase", token, body)
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	var out map[string]any
	r.JSON(&out)
	return out
}

func paymentOf(token, id string) map[string]any {
	GinkgoHelper()
	r := client.Do("GET", "/v1/payments/"+id, token, nil)
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	var p map[string]any
	r.JSON(&p)
	return p
}

// redirectCallback calls the redirect-style callback without following its redirect and
// answers the status and the parsed Location.
func redirectCallback(authority, status string) (int, *url.URL) {
	GinkgoHelper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	q := url.Values{"Authority": {authority}, "Status": {status}}
	resp, err := c.Get(serviceBase + "/v1/payments/callback/redirect?" + q.Encode())
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, loc
}

// notify posts a webhook-style gateway notification signed with secret.
func notify(secret string, body string) int {
	GinkgoHelper()
	sig := paygateway.Sign(secret, []byte(body), time.Now())
	return client.Do("POST", "/v1/payments/callback/webhook", "", body, "Webhook-Signature", sig).Status
}

var _ = Describe("plans", func() {
	var me member
	var userPlan, tenantPlan, otherPlan string

	BeforeEach(func() {
		tid, slug := newTenant("plans")
		me = newMember(slug, "")
		userPlan = newPlan(tid, "User", "Monthly", 1000)
		tenantPlan = newPlan(tid, "Tenant", "Yearly", 50000)
		Expect(testDB().Exec("UPDATE plans SET is_active = false WHERE id = ?", newPlan(tid, "User", "Monthly", 10)).Error).To(Succeed())
		otid, _ := newTenant("plans-other")
		otherPlan = newPlan(otid, "User", "Monthly", 500)
	})

	It("lists the active plans of the caller's tenant in the asked scope", func() {
		var list struct{ Data []map[string]any }
		r := client.Do("GET", "/v1/plans", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		r.JSON(&list)
		Expect(list.Data).To(HaveLen(1))
		Expect(list.Data[0]).To(HaveKeyWithValue("id", userPlan))
		Expect(list.Data[0]).To(HaveKeyWithValue("price_minor", BeNumerically("==", 1000)))
		Expect(list.Data[0]).To(HaveKeyWithValue("features", HaveKeyWithValue("watermark", false)))

		r = client.Do("GET", "/v1/plans?scope=Tenant", me.Token, nil)
		r.JSON(&list)
		Expect(list.Data).To(HaveLen(1))
		Expect(list.Data[0]).To(HaveKeyWithValue("id", tenantPlan))
	})

	It("refuses an unknown scope and anonymous callers", func() {
		Expect(client.Do("GET", "/v1/plans?scope=Galaxy", me.Token, nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/plans", "", nil).Status).To(Equal(http.StatusUnauthorized))
	})

	It("answers one plan of the tenant and 404 for another tenant's", func() {
		r := client.Do("GET", "/v1/plans/"+userPlan, me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(client.Do("GET", "/v1/plans/"+otherPlan, me.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/plans/not-a-uuid", me.Token, nil).Status).To(Equal(http.StatusBadRequest))
	})

	It("answers 404 no_plan before any purchase", func() {
		r := client.Do("GET", "/v1/users/me/plan", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(problemCode(r.Body)).To(Equal("no_plan"))
	})
})

var _ = Describe("buying a plan with the balance", func() {
	var me member
	var planID string

	BeforeEach(func() {
		tid, slug := newTenant("buy")
		me = newMember(slug, "")
		planID = newPlan(tid, "User", "Monthly", 1500)
	})

	It("takes the price, confirms the payment and activates the plan at once", func() {
		setBalance(me.ID, 2000)
		out := purchase(me.Token, map[string]any{"plan_id": planID, "gateway": "Balance"})
		Expect(out).To(HaveKeyWithValue("status", "Confirmed"))
		Expect(out["redirect_url"]).To(HavePrefix(paymentReturnURL + "?"))
		Expect(balanceOf(me.ID)).To(Equal(int64(500)))

		p := paymentOf(me.Token, out["payment_id"].(string))
		Expect(p).To(HaveKeyWithValue("status", "Confirmed"))
		Expect(p).To(HaveKeyWithValue("gateway", "Balance"))
		Expect(p).To(HaveKeyWithValue("amount_minor", BeNumerically("==", 1500)))

		r := client.Do("GET", "/v1/users/me/plan", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var up map[string]any
		r.JSON(&up)
		Expect(up).To(HaveKeyWithValue("plan_id", planID))
		Expect(up).To(HaveKeyWithValue("remain_charge_sec", BeNumerically("==", 3600)))
		Expect(outboxEvents(events.SubjectPaymentConfirmed, out["payment_id"].(string))).To(Equal(1))
		Expect(outboxEvents(events.SubjectPlanActivated, out["payment_id"].(string))).To(Equal(1))
	})

	It("refuses an insufficient balance with 409 and changes nothing", func() {
		setBalance(me.ID, 1499)
		r := client.Do("POST", "/v1/users/me/plan/purchase", me.Token, map[string]any{"plan_id": planID})
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(problemCode(r.Body)).To(Equal("insufficient_balance"))
		Expect(balanceOf(me.ID)).To(Equal(int64(1499)))
		Expect(countRows("payments", "user_id = ?", me.ID)).To(BeZero())
		Expect(countRows("user_plans", "user_id = ?", me.ID)).To(BeZero())
		Expect(outboxEvents(events.SubjectPaymentConfirmed, me.ID)).To(BeZero())
	})

	It("never overdraws when purchases race", func() {
		setBalance(me.ID, 3000)
		results := make(chan int, 5)
		for range 5 {
			go func() {
				defer GinkgoRecover()
				results <- client.Do("POST", "/v1/users/me/plan/purchase", me.Token, map[string]any{"plan_id": planID}).Status
			}()
		}
		var ok, conflict int
		for range 5 {
			switch <-results {
			case http.StatusOK:
				ok++
			case http.StatusConflict:
				conflict++
			}
		}
		Expect(ok).To(Equal(2))
		Expect(conflict).To(Equal(3))
		Expect(balanceOf(me.ID)).To(BeZero())
	})

	It("lets only administrators buy a tenant plan", func() {
		tenantPlan := newPlan(me.TenantID, "Tenant", "Yearly", 0)
		r := client.Do("POST", "/v1/users/me/plan/purchase", me.Token, map[string]any{"plan_id": tenantPlan})
		Expect(r.Status).To(Equal(http.StatusForbidden))
		admin := newMember(me.TenantSlug, "tenant-admin")
		Expect(purchase(admin.Token, map[string]any{"plan_id": tenantPlan})).To(HaveKeyWithValue("status", "Confirmed"))
	})

	It("refuses an unknown plan, a malformed body and anonymous callers", func() {
		Expect(client.Do("POST", "/v1/users/me/plan/purchase", me.Token, map[string]any{"plan_id": uuid.NewString()}).Status).
			To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/users/me/plan/purchase", me.Token, map[string]any{"plan_id": "nope"}).Status).
			To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/users/me/plan/purchase", me.Token, map[string]any{"plan_id": planID, "gateway": "Cash"}).Status).
			To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/users/me/plan/purchase", "", map[string]any{"plan_id": planID}).Status).
			To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("paying through a redirect-style gateway", func() {
	var me member
	var planID string

	BeforeEach(func() {
		tid, slug := newTenant("redirect")
		me = newMember(slug, "")
		planID = newPlan(tid, "User", "Monthly", 990)
	})

	start := func() (paymentID, authority string) {
		out := purchase(me.Token, map[string]any{"plan_id": planID, "gateway": "Redirect"})
		Expect(out).To(HaveKeyWithValue("status", "Pending"))
		Expect(out["redirect_url"]).To(HavePrefix("https://pay.example.test/start/A"))
		return out["payment_id"].(string), strings.TrimPrefix(out["redirect_url"].(string), "https://pay.example.test/start/")
	}

	It("confirms a verified payment once, however often the callback is replayed", func() {
		paymentID, authority := start()
		Expect(paymentOf(me.Token, paymentID)).To(HaveKeyWithValue("status", "Pending"))
		gateway.markPaid(authority)

		for range 3 {
			status, loc := redirectCallback(authority, "OK")
			Expect(status).To(Equal(http.StatusFound))
			Expect(loc.Host).To(Equal("app.example.test"))
			Expect(loc.Query().Get("payment_id")).To(Equal(paymentID))
			Expect(loc.Query().Get("status")).To(Equal("Confirmed"))
		}
		Expect(gateway.verifyCount(authority)).To(Equal(1))
		p := paymentOf(me.Token, paymentID)
		Expect(p).To(HaveKeyWithValue("status", "Confirmed"))
		Expect(p).To(HaveKeyWithValue("card_last4", "1234"))
		Expect(countRows("user_plans", "payment_id = ?", paymentID)).To(Equal(int64(1)))
		Expect(outboxEvents(events.SubjectPaymentConfirmed, paymentID)).To(Equal(1))
		Expect(client.Do("GET", "/v1/users/me/plan", me.Token, nil).Status).To(Equal(http.StatusOK))
	})

	It("confirms once when replayed callbacks race", func() {
		paymentID, authority := start()
		gateway.markPaid(authority)
		done := make(chan int, 6)
		for range 6 {
			go func() {
				defer GinkgoRecover()
				status, _ := redirectCallback(authority, "OK")
				done <- status
			}()
		}
		for range 6 {
			Expect(<-done).To(Equal(http.StatusFound))
		}
		Expect(countRows("user_plans", "payment_id = ?", paymentID)).To(Equal(int64(1)))
		Expect(outboxEvents(events.SubjectPaymentConfirmed, paymentID)).To(Equal(1))
	})

	It("fails a payment the user cancelled or the gateway does not verify", func() {
		cancelled, authority := start()
		status, loc := redirectCallback(authority, "NOK")
		Expect(status).To(Equal(http.StatusFound))
		Expect(loc.Query().Get("status")).To(Equal("Failed"))
		Expect(gateway.verifyCount(authority)).To(BeZero())
		Expect(outboxEvents(events.SubjectPaymentFailed, cancelled)).To(Equal(1))

		unpaid, authority := start()
		_, loc = redirectCallback(authority, "OK")
		Expect(loc.Query().Get("status")).To(Equal("Failed"))
		p := paymentOf(me.Token, unpaid)
		Expect(p).To(HaveKeyWithValue("status", "Failed"))
		Expect(p).To(HaveKeyWithValue("failure_reason", "not paid"))
		Expect(countRows("user_plans", "user_id = ?", me.ID)).To(BeZero())
	})

	It("answers 503 when the gateway cannot start the payment, leaving it failed", func() {
		tid := me.TenantID
		r := client.Do("POST", "/v1/users/me/plan/purchase", me.Token, map[string]any{
			"plan_id": newPlan(tid, "User", "Monthly", gatewayDownAmount), "gateway": "Redirect",
		})
		Expect(r.Status).To(Equal(http.StatusServiceUnavailable))
		Expect(problemCode(r.Body)).To(Equal("gateway_unavailable"))
		Expect(countRows("payments", "user_id = ? AND status = 'Failed'", me.ID)).To(Equal(int64(1)))
		Expect(countRows("user_plans", "user_id = ?", me.ID)).To(BeZero())
	})

	It("redirects an unknown authority as Unknown and refuses a callback without parameters", func() {
		status, loc := redirectCallback("no-such-authority", "OK")
		Expect(status).To(Equal(http.StatusFound))
		Expect(loc.Query().Get("status")).To(Equal("Unknown"))
		Expect(client.Do("GET", "/v1/payments/callback/redirect?Status=OK", "", nil).Status).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("paying through the sandbox gateway", func() {
	It("sends the user straight to the callback, which confirms the payment", func() {
		tid, slug := newTenant("sandbox")
		me := newMember(slug, "")
		planID := newPlan(tid, "User", "Quarterly", 3000)
		out := purchase(me.Token, map[string]any{"plan_id": planID, "gateway": "Sandbox"})
		u, err := url.Parse(out["redirect_url"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(u.Path).To(Equal("/v1/payments/callback/redirect"))
		status, loc := redirectCallback(u.Query().Get("Authority"), u.Query().Get("Status"))
		Expect(status).To(Equal(http.StatusFound))
		Expect(loc.Query().Get("status")).To(Equal("Confirmed"))
		var up map[string]any
		client.Do("GET", "/v1/users/me/plan", me.Token, nil).JSON(&up)
		starts, _ := time.Parse(time.RFC3339, up["starts_at"].(string))
		expires, _ := time.Parse(time.RFC3339, up["expires_at"].(string))
		Expect(expires).To(Equal(starts.AddDate(0, 3, 0)))
	})
})

var _ = Describe("paying through a webhook-style gateway", func() {
	var me member
	var paymentID, checkout string

	BeforeEach(func() {
		tid, slug := newTenant("hook")
		me = newMember(slug, "")
		out := purchase(me.Token, map[string]any{"plan_id": newPlan(tid, "User", "Monthly", 700), "gateway": "Webhook"})
		paymentID = out["payment_id"].(string)
		Expect(out["redirect_url"]).To(HavePrefix("https://checkout.example.test/chk_"))
		checkout = strings.TrimPrefix(out["redirect_url"].(string), "https://checkout.example.test/")
	})

	body := func(typ string) string {
		return `{"id":"evt_` + uuid.NewString() + `","type":"` + typ + `","data":{"checkout_id":"` + checkout + `","card_last4":"9876","failure_reason":"card declined"}}`
	}

	It("confirms on a signed success notification, once", func() {
		b := body("payment.succeeded")
		Expect(notify(webhookGatewaySecret, b)).To(Equal(http.StatusOK))
		Expect(notify(webhookGatewaySecret, b)).To(Equal(http.StatusOK))
		Expect(notify(webhookGatewaySecret, body("payment.failed"))).To(Equal(http.StatusOK))
		p := paymentOf(me.Token, paymentID)
		Expect(p).To(HaveKeyWithValue("status", "Confirmed"))
		Expect(p).To(HaveKeyWithValue("card_last4", "9876"))
		Expect(outboxEvents(events.SubjectPaymentConfirmed, paymentID)).To(Equal(1))
		Expect(outboxEvents(events.SubjectPaymentFailed, paymentID)).To(BeZero())
	})

	It("fails a payment the gateway reports for another amount", func() {
		b := `{"id":"evt_x","type":"payment.succeeded","data":{"checkout_id":"` + checkout + `","amount_minor":1}}`
		Expect(notify(webhookGatewaySecret, b)).To(Equal(http.StatusOK))
		Expect(paymentOf(me.Token, paymentID)).To(HaveKeyWithValue("status", "Failed"))
		Expect(countRows("user_plans", "payment_id = ?", paymentID)).To(BeZero())
	})

	It("fails on a signed failure notification", func() {
		Expect(notify(webhookGatewaySecret, body("payment.failed"))).To(Equal(http.StatusOK))
		Expect(paymentOf(me.Token, paymentID)).To(HaveKeyWithValue("failure_reason", "card declined"))
	})

	It("refuses a wrong or missing signature and leaves the payment pending", func() {
		Expect(notify("not-the-secret", body("payment.succeeded"))).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("POST", "/v1/payments/callback/webhook", "", body("payment.succeeded")).Status).To(Equal(http.StatusUnauthorized))
		stale := paygateway.Sign(webhookGatewaySecret, []byte(body("payment.succeeded")), time.Now().Add(-time.Hour))
		Expect(client.Do("POST", "/v1/payments/callback/webhook", "", body("payment.succeeded"), "Webhook-Signature", stale).Status).
			To(Equal(http.StatusUnauthorized))
		Expect(paymentOf(me.Token, paymentID)).To(HaveKeyWithValue("status", "Pending"))
	})

	It("answers 404 for an unknown checkout and 400 for an unreadable notification", func() {
		Expect(notify(webhookGatewaySecret, `{"id":"evt_1","type":"payment.succeeded","data":{"checkout_id":"chk_unknown"}}`)).
			To(Equal(http.StatusNotFound))
		Expect(notify(webhookGatewaySecret, `{"id":"evt_1","type":"payment.exploded","data":{"checkout_id":"`+checkout+`"}}`)).
			To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("a user's payments", func() {
	var me, other, foreigner member
	var ids []string

	BeforeEach(func() {
		tid, slug := newTenant("pays")
		me = newMember(slug, "")
		other = newMember(slug, "")
		_, fslug := newTenant("pays-far")
		foreigner = newMember(fslug, "")
		planID := newPlan(tid, "User", "Monthly", 100)
		setBalance(me.ID, 1000)
		ids = nil
		for range 3 {
			ids = append(ids, purchase(me.Token, map[string]any{"plan_id": planID})["payment_id"].(string))
		}
	})

	It("lists them newest first, paged", func() {
		var page struct {
			Data []map[string]any
			Meta map[string]any
		}
		r := client.Do("GET", "/v1/payments?page=1&page_size=2", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		r.JSON(&page)
		Expect(page.Data).To(HaveLen(2))
		Expect(page.Data[0]).To(HaveKeyWithValue("id", ids[2]))
		Expect(page.Meta).To(HaveKeyWithValue("total", BeNumerically("==", 3)))
		Expect(page.Meta).To(HaveKeyWithValue("has_more", true))
		client.Do("GET", "/v1/payments?page=2&page_size=2", me.Token, nil).JSON(&page)
		Expect(page.Data).To(HaveLen(1))
		Expect(page.Meta).To(HaveKeyWithValue("has_more", false))
		Expect(client.Do("GET", "/v1/payments?page_size=101", me.Token, nil).Status).To(Equal(http.StatusBadRequest))
	})

	It("hides them from other users and other tenants", func() {
		Expect(client.Do("GET", "/v1/payments/"+ids[0], other.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/payments/"+ids[0], foreigner.Token, nil).Status).To(Equal(http.StatusNotFound))
		var page struct{ Data []map[string]any }
		client.Do("GET", "/v1/payments", other.Token, nil).JSON(&page)
		Expect(page.Data).To(BeEmpty())
		Expect(client.Do("GET", "/v1/payments", "", nil).Status).To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("refunding a payment", func() {
	var me member
	var planID string

	BeforeEach(func() {
		tid, slug := newTenant("refund")
		me = newMember(slug, "")
		planID = newPlan(tid, "User", "Monthly", 1000)
	})

	refund := func(body map[string]any) (int, map[string]any) {
		r := client.Do("POST", "/v1/payments/refund", serviceToken(), body)
		var out map[string]any
		if r.Status == http.StatusOK {
			r.JSON(&out)
		}
		return r.Status, out
	}

	It("refunds to the balance, partly and then the rest, never above the amount paid", func() {
		setBalance(me.ID, 1000)
		id := purchase(me.Token, map[string]any{"plan_id": planID})["payment_id"].(string)
		status, out := refund(map[string]any{"payment_id": id, "reason": "goodwill", "amount_minor": 300})
		Expect(status).To(Equal(http.StatusOK))
		Expect(out).To(HaveKeyWithValue("status", "Completed"))
		Expect(balanceOf(me.ID)).To(Equal(int64(300)))
		Expect(paymentOf(me.Token, id)).To(HaveKeyWithValue("status", "PartiallyRefunded"))
		Expect(outboxEvents(events.SubjectPaymentRefunded, out["refund_id"].(string))).To(Equal(1))

		status, _ = refund(map[string]any{"payment_id": id, "reason": "too much", "amount_minor": 701})
		Expect(status).To(Equal(http.StatusConflict))
		status, _ = refund(map[string]any{"payment_id": id, "reason": "the rest"})
		Expect(status).To(Equal(http.StatusOK))
		Expect(balanceOf(me.ID)).To(Equal(int64(1000)))
		p := paymentOf(me.Token, id)
		Expect(p).To(HaveKeyWithValue("status", "Refunded"))
		Expect(p).To(HaveKeyWithValue("refunded_minor", BeNumerically("==", 1000)))
		status, _ = refund(map[string]any{"payment_id": id, "reason": "again"})
		Expect(status).To(Equal(http.StatusConflict))
	})

	It("refunds a gateway payment through the gateway", func() {
		out := purchase(me.Token, map[string]any{"plan_id": planID, "gateway": "Redirect"})
		authority := strings.TrimPrefix(out["redirect_url"].(string), "https://pay.example.test/start/")
		gateway.markPaid(authority)
		redirectCallback(authority, "OK")
		status, _ := refund(map[string]any{"payment_id": out["payment_id"], "reason": "defect", "refund_to": "OriginalMethod", "amount_minor": 400})
		Expect(status).To(Equal(http.StatusOK))
		Expect(gateway.refundsOf(authority)).To(ConsistOf(HaveKeyWithValue("amount_minor", BeNumerically("==", 400))))
		Expect(balanceOf(me.ID)).To(BeZero())
	})

	It("refunds as plan time by extending the current plan", func() {
		setBalance(me.ID, 1000)
		id := purchase(me.Token, map[string]any{"plan_id": planID})["payment_id"].(string)
		var before, after map[string]any
		client.Do("GET", "/v1/users/me/plan", me.Token, nil).JSON(&before)
		status, _ := refund(map[string]any{"payment_id": id, "reason": "outage", "refund_to": "Plan", "amount_minor": 500})
		Expect(status).To(Equal(http.StatusOK))
		client.Do("GET", "/v1/users/me/plan", me.Token, nil).JSON(&after)
		starts, _ := time.Parse(time.RFC3339, before["starts_at"].(string))
		was, _ := time.Parse(time.RFC3339, before["expires_at"].(string))
		is, _ := time.Parse(time.RFC3339, after["expires_at"].(string))
		Expect(is.Sub(was)).To(BeNumerically("~", was.Sub(starts)/2, time.Second))
		Expect(balanceOf(me.ID)).To(BeZero())
	})

	It("refuses users, unknown and unconfirmed payments and bad requests", func() {
		pending := purchase(me.Token, map[string]any{"plan_id": planID, "gateway": "Redirect"})["payment_id"]
		Expect(client.Do("POST", "/v1/payments/refund", me.Token, map[string]any{"payment_id": pending, "reason": "x"}).Status).
			To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/payments/refund", "", map[string]any{"payment_id": pending, "reason": "x"}).Status).
			To(Equal(http.StatusUnauthorized))
		status, _ := refund(map[string]any{"payment_id": pending, "reason": "x"})
		Expect(status).To(Equal(http.StatusConflict))
		status, _ = refund(map[string]any{"payment_id": uuid.NewString(), "reason": "x"})
		Expect(status).To(Equal(http.StatusNotFound))
		status, _ = refund(map[string]any{"payment_id": pending, "reason": ""})
		Expect(status).To(Equal(http.StatusBadRequest))
	})
})
