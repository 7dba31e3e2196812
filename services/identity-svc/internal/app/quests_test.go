package app_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	events "github.com/motionstudio/platform/proto-events"
)

// newQuest seeds an active quest of the tenant and answers its id.
func newQuest(tenantID, questType, trigger string, target int, prizeType string, prize int64, giftID *string) string {
	GinkgoHelper()
	id := uuid.NewString()
	Expect(testDB().Exec(`INSERT INTO quests (id, tenant_id, title, challenge, quest_type, trigger, target_count, prize_type, prize_amount, gift_id)
		VALUES (?, ?, 'Quest', 'Do it', ?, ?, ?, ?, ?, ?)`, id, tenantID, questType, trigger, target, prizeType, prize, giftID).Error).To(Succeed())
	return id
}

// newGift seeds a gift of the tenant and answers its id.
func newGift(tenantID, prizeType string, value int64) string {
	GinkgoHelper()
	id := uuid.NewString()
	Expect(testDB().Exec(`INSERT INTO gifts (id, tenant_id, name, description, prize_type, unit, value, valid_for)
		VALUES (?, ?, 'Gift', 'A gift', ?, 'unit', ?, interval '30 days')`, id, tenantID, prizeType, value).Error).To(Succeed())
	return id
}

// earnGift seeds an earned gift of the user and answers its id.
func earnGift(m member, giftID string, expiresAt *time.Time) string {
	GinkgoHelper()
	id := uuid.NewString()
	Expect(testDB().Exec(`INSERT INTO earned_gifts (id, gift_id, tenant_id, user_id, expires_at) VALUES (?, ?, ?, ?, ?)`,
		id, giftID, m.TenantID, m.ID, expiresAt).Error).To(Succeed())
	return id
}

func questOf(token, id string) map[string]any {
	GinkgoHelper()
	var list struct{ Data []map[string]any }
	r := client.Do("GET", "/v1/quests", token, nil)
	Expect(r.Status).To(Equal(http.StatusOK))
	r.JSON(&list)
	for _, q := range list.Data {
		if q["id"] == id {
			return q
		}
	}
	return nil
}

func earnedGifts(token string) []map[string]any {
	GinkgoHelper()
	var list struct{ Data []map[string]any }
	r := client.Do("GET", "/v1/gifts/earned", token, nil)
	Expect(r.Status).To(Equal(http.StatusOK))
	r.JSON(&list)
	return list.Data
}

var _ = Describe("quests", func() {
	var tenantID string
	var me member
	var planID string

	BeforeEach(func() {
		var slug string
		tenantID, slug = newTenant("quest")
		me = newMember(slug, "")
		planID = newPlan(tenantID, "User", "Monthly", 100)
		setBalance(me.ID, 1000)
	})

	It("progresses from payments, completes at the target and pays its prize once", func() {
		questID := newQuest(tenantID, "Milestone", "payment.confirmed", 2, "Balance", 250, nil)
		Expect(questOf(me.Token, questID)).To(And(HaveKeyWithValue("current_count", BeNumerically("==", 0)),
			HaveKeyWithValue("is_completed", false), HaveKeyWithValue("target_count", BeNumerically("==", 2))))
		r := client.Do("POST", "/v1/quests/"+questID+"/claim", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(problemCode(r.Body)).To(Equal("quest_not_completed"))

		purchase(me.Token, map[string]any{"plan_id": planID})
		Eventually(func() any { return questOf(me.Token, questID)["current_count"] }).WithTimeout(10 * time.Second).
			Should(BeNumerically("==", 1))
		purchase(me.Token, map[string]any{"plan_id": planID})
		Eventually(func() any { return questOf(me.Token, questID)["is_completed"] }).WithTimeout(10 * time.Second).Should(BeTrue())
		Expect(outboxEvents(events.SubjectQuestCompleted, questID, me.ID)).To(Equal(1))

		r = client.Do("POST", "/v1/quests/"+questID+"/claim", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var claim map[string]any
		r.JSON(&claim)
		Expect(claim).To(And(HaveKeyWithValue("prize_type", "Balance"), HaveKeyWithValue("prize_amount", BeNumerically("==", 250))))
		Expect(balanceOf(me.ID)).To(Equal(int64(1000 - 200 + 250)))
		Expect(questOf(me.Token, questID)).To(HaveKeyWithValue("prize_claimed", true))

		r = client.Do("POST", "/v1/quests/"+questID+"/claim", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(problemCode(r.Body)).To(Equal("prize_claimed"))
		Expect(balanceOf(me.ID)).To(Equal(int64(1050)))
	})

	It("counts a daily quest in today's round and keeps other users' progress apart", func() {
		questID := newQuest(tenantID, "Daily", "plan.activated", 1, "Balance", 10, nil)
		other := newMember(me.TenantSlug, "")
		purchase(me.Token, map[string]any{"plan_id": planID})
		Eventually(func() any { return questOf(me.Token, questID)["is_completed"] }).WithTimeout(10 * time.Second).Should(BeTrue())
		Expect(questOf(other.Token, questID)).To(HaveKeyWithValue("is_completed", false))
		Expect(client.Do("POST", "/v1/quests/"+questID+"/claim", other.Token, nil).Status).To(Equal(http.StatusConflict))
		Expect(client.Do("POST", "/v1/quests/"+questID+"/claim", me.Token, nil).Status).To(Equal(http.StatusOK))
	})

	It("completes an onboarding quest when an account registers", func() {
		questID := newQuest(tenantID, "Onboarding", "user.registered", 1, "Balance", 100, nil)
		email := "onboard-" + uuid.NewString()[:8] + "@example.test"
		ip := fmt.Sprintf("10.77.%d.%d", rand.IntN(250), rand.IntN(250))
		r := client.Do("POST", "/v1/auth/register", "", map[string]any{
			"tenant_slug": me.TenantSlug, "email": email, "password": "correct-horse-battery",
		}, "X-Forwarded-For", ip)
		Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
		var reg map[string]any
		r.JSON(&reg)
		Eventually(func() int64 {
			return countRows("quest_progress", "quest_id = ? AND user_id = ? AND completed_at IS NOT NULL", questID, reg["user_id"])
		}).WithTimeout(10 * time.Second).Should(Equal(int64(1)))
		Expect(questOf(me.Token, questID)).To(HaveKeyWithValue("is_completed", false))
	})

	It("hides other tenants' quests and refuses anonymous callers", func() {
		otherTenant, _ := newTenant("quest-far")
		foreign := newQuest(otherTenant, "OneTime", "payment.confirmed", 1, "Balance", 10, nil)
		Expect(questOf(me.Token, foreign)).To(BeNil())
		Expect(client.Do("POST", "/v1/quests/"+foreign+"/claim", me.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/quests/not-a-uuid/claim", me.Token, nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/quests", "", nil).Status).To(Equal(http.StatusUnauthorized))
	})

	It("earns a gift prize that is used once", func() {
		giftID := newGift(tenantID, "Balance", 75)
		questID := newQuest(tenantID, "OneTime", "payment.confirmed", 1, "Gift", 0, &giftID)
		purchase(me.Token, map[string]any{"plan_id": planID})
		Eventually(func() any { return questOf(me.Token, questID)["is_completed"] }).WithTimeout(10 * time.Second).Should(BeTrue())
		r := client.Do("POST", "/v1/quests/"+questID+"/claim", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var claim map[string]any
		r.JSON(&claim)
		earned := claim["earned_gift_id"].(string)

		gifts := earnedGifts(me.Token)
		Expect(gifts).To(ConsistOf(And(HaveKeyWithValue("id", earned), HaveKeyWithValue("gift_id", giftID),
			HaveKeyWithValue("is_used", false), HaveKeyWithValue("expires_at", Not(BeNil())))))
		r = client.Do("POST", "/v1/gifts/earned/"+earned+"/use", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var used map[string]any
		r.JSON(&used)
		Expect(used).To(HaveKeyWithValue("is_used", true))
		Expect(balanceOf(me.ID)).To(Equal(int64(1000 - 100 + 75)))
		Expect(earnedGifts(me.Token)).To(BeEmpty())

		r = client.Do("POST", "/v1/gifts/earned/"+earned+"/use", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(problemCode(r.Body)).To(Equal("gift_used"))
		Expect(balanceOf(me.ID)).To(Equal(int64(975)))
	})
})

var _ = Describe("earned gifts", func() {
	var tenantID string
	var me member

	BeforeEach(func() {
		var slug string
		tenantID, slug = newTenant("gift")
		me = newMember(slug, "")
	})

	It("adds daily renders", func() {
		id := earnGift(me, newGift(tenantID, "DailyRenders", 3), nil)
		var before int
		Expect(testDB().Raw("SELECT daily_remain_render_count FROM users WHERE id = ?", me.ID).Scan(&before).Error).To(Succeed())
		Expect(client.Do("POST", "/v1/gifts/earned/"+id+"/use", me.Token, nil).Status).To(Equal(http.StatusOK))
		var after int
		Expect(testDB().Raw("SELECT daily_remain_render_count FROM users WHERE id = ?", me.ID).Scan(&after).Error).To(Succeed())
		Expect(after).To(Equal(before + 3))
	})

	It("adds render seconds to the current plan, and needs one", func() {
		id := earnGift(me, newGift(tenantID, "RenderSeconds", 120), nil)
		r := client.Do("POST", "/v1/gifts/earned/"+id+"/use", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(problemCode(r.Body)).To(Equal("no_plan"))
		Expect(earnedGifts(me.Token)).To(HaveLen(1))

		purchase(me.Token, map[string]any{"plan_id": newPlan(tenantID, "User", "Monthly", 0)})
		Expect(client.Do("POST", "/v1/gifts/earned/"+id+"/use", me.Token, nil).Status).To(Equal(http.StatusOK))
		var up map[string]any
		client.Do("GET", "/v1/users/me/plan", me.Token, nil).JSON(&up)
		Expect(up).To(HaveKeyWithValue("remain_charge_sec", BeNumerically("==", 3600+120)))
	})

	It("refuses expired gifts and other users' gifts", func() {
		past := time.Now().Add(-time.Minute)
		expired := earnGift(me, newGift(tenantID, "Balance", 5), &past)
		Expect(earnedGifts(me.Token)).To(BeEmpty())
		r := client.Do("POST", "/v1/gifts/earned/"+expired+"/use", me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(problemCode(r.Body)).To(Equal("gift_expired"))

		mine := earnGift(me, newGift(tenantID, "Balance", 5), nil)
		other := newMember(me.TenantSlug, "")
		Expect(client.Do("POST", "/v1/gifts/earned/"+mine+"/use", other.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(earnedGifts(other.Token)).To(BeEmpty())
		Expect(client.Do("POST", "/v1/gifts/earned/"+uuid.NewString()+"/use", me.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/gifts/earned", "", nil).Status).To(Equal(http.StatusUnauthorized))
	})
})
