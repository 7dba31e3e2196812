package app_test

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("discount codes", func() {
	var tenantID string
	var admin, me member
	var monthly, yearly string

	BeforeEach(func() {
		var slug string
		tenantID, slug = newTenant("disc")
		admin = newMember(slug, "tenant-admin")
		me = newMember(slug, "")
		monthly = newPlan(tenantID, "User", "Monthly", 999)
		yearly = newPlan(tenantID, "User", "Yearly", 12000)
	})

	create := func(body map[string]any) map[string]any {
		GinkgoHelper()
		r := client.Do("POST", "/v1/discounts", admin.Token, body)
		Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
		var d map[string]any
		r.JSON(&d)
		return d
	}

	validate := func(code, planID string) map[string]any {
		GinkgoHelper()
		body := map[string]any{"code": code}
		if planID != "" {
			body["plan_id"] = planID
		}
		r := client.Do("POST", "/v1/discounts/validate", me.Token, body)
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var v map[string]any
		r.JSON(&v)
		return v
	}

	It("lets a tenant administrator create and list codes, case-insensitively unique", func() {
		d := create(map[string]any{"name": "Spring", "code": "spring-25", "kind": "Percentage", "value": 25, "max_use_count": 10,
			"applies_to_plan_ids": []string{monthly}})
		Expect(d).To(HaveKeyWithValue("code", "SPRING-25"))
		Expect(d).To(HaveKeyWithValue("use_count", BeNumerically("==", 0)))
		Expect(d["applies_to_plan_ids"]).To(ConsistOf(monthly))

		r := client.Do("POST", "/v1/discounts", admin.Token, map[string]any{"name": "Again", "code": "Spring-25", "kind": "FixedAmount", "value": 1})
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(problemCode(r.Body)).To(Equal("discount_code_taken"))

		create(map[string]any{"name": "Second", "code": "SECOND", "kind": "FreeMonths", "value": 1})
		var page struct {
			Data []map[string]any
			Meta map[string]any
		}
		r = client.Do("GET", "/v1/discounts?page_size=1", admin.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		r.JSON(&page)
		Expect(page.Data).To(HaveLen(1))
		Expect(page.Data[0]).To(HaveKeyWithValue("code", "SECOND"))
		Expect(page.Meta).To(HaveKeyWithValue("total", BeNumerically("==", 2)))
	})

	It("refuses other users, invalid codes and other tenants' plans", func() {
		Expect(client.Do("POST", "/v1/discounts", me.Token, map[string]any{"name": "x", "code": "X", "kind": "Percentage", "value": 5}).Status).
			To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/discounts", me.Token, nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/discounts", "", nil).Status).To(Equal(http.StatusUnauthorized))

		r := client.Do("POST", "/v1/discounts", admin.Token, map[string]any{"name": "x", "code": "BAD CODE", "kind": "Percentage", "value": 150})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(And(ContainSubstring(`"field":"code"`), ContainSubstring(`"field":"value"`)))
		Expect(client.Do("POST", "/v1/discounts", admin.Token, map[string]any{"name": "x", "code": "FRAC", "kind": "FreeMonths", "value": 1.5}).Status).
			To(Equal(http.StatusBadRequest))

		otherTenant, _ := newTenant("disc-other")
		r = client.Do("POST", "/v1/discounts", admin.Token, map[string]any{"name": "x", "code": "FOREIGN", "kind": "Percentage", "value": 5,
			"applies_to_plan_ids": []string{newPlan(otherTenant, "User", "Monthly", 100)}})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
	})

	It("computes each kind in minor units", func() {
		create(map[string]any{"name": "p", "code": "PCT", "kind": "Percentage", "value": 12.5})
		create(map[string]any{"name": "f", "code": "FIX", "kind": "FixedAmount", "value": 300})
		create(map[string]any{"name": "b", "code": "BIG", "kind": "FixedAmount", "value": 5000})
		create(map[string]any{"name": "m", "code": "MONTHS", "kind": "FreeMonths", "value": 2})
		create(map[string]any{"name": "r", "code": "RENDER", "kind": "RenderCredits", "value": 600})

		Expect(validate("pct", monthly)).To(And(HaveKeyWithValue("valid", true), HaveKeyWithValue("discount_minor", BeNumerically("==", 124)),
			HaveKeyWithValue("kind", "Percentage"), HaveKeyWithValue("value", BeNumerically("==", 12.5))))
		Expect(validate("FIX", monthly)).To(HaveKeyWithValue("discount_minor", BeNumerically("==", 300)))
		Expect(validate("FIX", "")).To(HaveKeyWithValue("discount_minor", BeNumerically("==", 300)))
		Expect(validate("BIG", monthly)).To(HaveKeyWithValue("discount_minor", BeNumerically("==", 999)))
		Expect(validate("MONTHS", yearly)).To(HaveKeyWithValue("discount_minor", BeNumerically("==", 2000)))
		Expect(validate("MONTHS", monthly)).To(HaveKeyWithValue("discount_minor", BeNumerically("==", 999)))
		Expect(validate("RENDER", monthly)).To(And(HaveKeyWithValue("discount_minor", BeNumerically("==", 0)),
			HaveKeyWithValue("bonus_seconds", BeNumerically("==", 600))))
	})

	It("says why a code does not apply", func() {
		past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		create(map[string]any{"name": "old", "code": "OLD", "kind": "Percentage", "value": 10, "expires_at": past})
		create(map[string]any{"name": "soon", "code": "SOON", "kind": "Percentage", "value": 10, "starts_at": future})
		create(map[string]any{"name": "only", "code": "ONLY", "kind": "Percentage", "value": 10, "applies_to_plan_ids": []string{yearly}})

		Expect(validate("OLD", monthly)).To(And(HaveKeyWithValue("valid", false), HaveKeyWithValue("reason", "expired")))
		Expect(validate("SOON", "")).To(HaveKeyWithValue("reason", "not_started"))
		Expect(validate("ONLY", monthly)).To(HaveKeyWithValue("reason", "not_applicable"))
		Expect(validate("ONLY", yearly)).To(HaveKeyWithValue("valid", true))
		Expect(validate("NOPE", "")).To(And(HaveKeyWithValue("reason", "not_found"), HaveKeyWithValue("kind", "")))
		Expect(client.Do("POST", "/v1/discounts/validate", me.Token, map[string]any{"code": "OLD", "plan_id": uuid.NewString()}).Status).
			To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/discounts/validate", me.Token, map[string]any{}).Status).To(Equal(http.StatusBadRequest))
	})

	It("is applied at purchase, with its uses counted atomically", func() {
		create(map[string]any{"name": "half", "code": "HALF", "kind": "Percentage", "value": 50, "max_use_count": 2})
		buyers := make([]member, 5)
		for i := range buyers {
			buyers[i] = newMember(me.TenantSlug, "")
			setBalance(buyers[i].ID, 10000)
		}
		results := make(chan int, len(buyers))
		for _, b := range buyers {
			go func() {
				defer GinkgoRecover()
				results <- client.Do("POST", "/v1/users/me/plan/purchase", b.Token, map[string]any{"plan_id": yearly, "discount_code": "half"}).Status
			}()
		}
		ok := 0
		for range buyers {
			if s := <-results; s == http.StatusOK {
				ok++
			} else {
				Expect(s).To(BeElementOf(http.StatusConflict, http.StatusBadRequest))
			}
		}
		Expect(ok).To(Equal(2))
		Expect(countRows("payments", "discount_code = ? AND tenant_id = ?", "HALF", tenantID)).To(Equal(int64(2)))
		Expect(countRows("users", "tenant_id = ? AND balance_minor = ?", tenantID, 10000-6000)).To(Equal(int64(2)))
		Expect(countRows("users", "tenant_id = ? AND balance_minor = ?", tenantID, 10000)).To(Equal(int64(3)))
		Expect(validate("HALF", yearly)).To(HaveKeyWithValue("reason", "exhausted"))
	})

	It("adds render credits to the bought plan and gives a failed payment's use back", func() {
		create(map[string]any{"name": "r", "code": "RENDER", "kind": "RenderCredits", "value": 600, "max_use_count": 1})
		out := purchase(me.Token, map[string]any{"plan_id": monthly, "gateway": "Webhook", "discount_code": "RENDER"})
		Expect(validate("RENDER", monthly)).To(HaveKeyWithValue("reason", "exhausted"))
		checkout := out["redirect_url"].(string)[len("https://checkout.example.test/"):]
		Expect(notify(webhookGatewaySecret, `{"id":"e1","type":"payment.failed","data":{"checkout_id":"`+checkout+`"}}`)).To(Equal(http.StatusOK))
		Expect(validate("RENDER", monthly)).To(HaveKeyWithValue("valid", true))

		setBalance(me.ID, 999)
		purchase(me.Token, map[string]any{"plan_id": monthly, "discount_code": "RENDER"})
		var up map[string]any
		client.Do("GET", "/v1/users/me/plan", me.Token, nil).JSON(&up)
		Expect(up).To(HaveKeyWithValue("initial_seconds_charge", BeNumerically("==", 3600+600)))
	})

	It("activates a plan a discount makes free without any gateway", func() {
		create(map[string]any{"name": "free", "code": "FREE", "kind": "FixedAmount", "value": 999})
		out := purchase(me.Token, map[string]any{"plan_id": monthly, "gateway": "Redirect", "discount_code": "FREE"})
		Expect(out).To(HaveKeyWithValue("status", "Confirmed"))
		p := paymentOf(me.Token, out["payment_id"].(string))
		Expect(p).To(And(HaveKeyWithValue("amount_minor", BeNumerically("==", 0)), HaveKeyWithValue("discount_minor", BeNumerically("==", 999))))
		r := client.Do("POST", "/v1/users/me/plan/purchase", me.Token, map[string]any{"plan_id": monthly, "discount_code": "NOPE"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(problemCode(r.Body)).To(Equal("discount_not_found"))
	})
})
