package store_test

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
	"github.com/motionstudio/platform/services/identity-svc/internal/apikey"
	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
	"github.com/motionstudio/platform/services/identity-svc/internal/quest"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
	"github.com/motionstudio/platform/services/identity-svc/internal/webhook"
)

// seededAccount is a tenant with one user, inserted straight into the tables.
type seededAccount struct{ tenant, user string }

// seedEach inserts a tenant and a user for each caller.
func seedEach() []seededAccount {
	GinkgoHelper()
	out := make([]seededAccount, testkit.Contenders)
	for i := range out {
		a := seededAccount{tenant: uuid.NewString(), user: uuid.NewString()}
		Expect(db.Exec(`INSERT INTO tenants (id, slug, name, kind, status, contact_email) VALUES (?, ?, 'Lock', 'Reseller', 'Active', 'ops@lock.test')`,
			a.tenant, "lock-"+a.tenant[:8]).Error).To(Succeed())
		Expect(db.Exec(`INSERT INTO users (id, tenant_id, email, full_name, register_mode, password_hash) VALUES (?, ?, ?, 'First', 'email', 'x')`,
			a.user, a.tenant, a.user+"@lock.test").Error).To(Succeed())
		out[i] = a
	}
	return out
}

func writer() *outbox.Writer { return outbox.NewWriter(events.SourceIdentity) }

var _ = Describe("locking rows from 30 callers at once over a pool of 5 connections", func() {
	// Each caller locks a row of its own: the rows do not queue the callers, so a call that
	// stalls waits for a connection that a transaction holds while it waits for another.
	DescribeTable("completes every call within a second", Serial, func(prepare func() testkit.ContendedCall) { testkit.Contend(dsn, prepare) },
		Entry("updating tenants", func() testkit.ContendedCall {
			seeds := seedEach()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				_, err := store.NewTenants(small, writer(), nil).Update(ctx, seeds[i].tenant, func(t *tenant.Tenant) (tenant.Change, error) {
					t.Name = fmt.Sprintf("Lock %d", i)
					return tenant.Change{Fields: []string{"name"}, At: time.Now().UTC()}, nil
				})
				return err
			}
		}),
		Entry("updating users", func() testkit.ContendedCall {
			seeds := seedEach()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				_, err := store.NewUsers(small, writer(), nil).Update(ctx, seeds[i].user, func(u *account.User) error {
					name := fmt.Sprintf("User %d", i)
					u.FullName = &name
					return nil
				})
				return err
			}
		}),
		Entry("creating API keys, each tenant's row locked", func() testkit.ContendedCall {
			seeds := seedEach()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				id := uuid.NewString()
				return store.NewAPIKeys(small, writer()).Create(ctx, &apikey.Key{
					ID: id, TenantID: seeds[i].tenant, Name: "k", Environment: "Live", Prefix: "msk_live", Last4: "abcd",
					Hash: id, RateLimitRPM: 60, CreatedAt: time.Now().UTC(),
				})
			}
		}),
		Entry("creating webhooks, each tenant's row locked", func() testkit.ContendedCall {
			seeds := seedEach()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				return store.NewWebhooks(small, writer()).Create(ctx, &webhook.Webhook{
					ID: uuid.NewString(), TenantID: seeds[i].tenant, Name: "w", URL: "https://hooks.example/w",
					Events: []string{"user.created"}, SealedSecret: []byte("sealed"), CreatedAt: time.Now().UTC(),
				})
			}
		}),
		Entry("advancing quests", func() testkit.ContendedCall {
			quests := seedQuests()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				return store.NewQuests(small, writer(), nil).Advance(ctx, &quests[i].quest, quests[i].user, "once", time.Now().UTC())
			}
		}),
		Entry("claiming quests, crediting the users' balances", func() testkit.ContendedCall {
			quests := seedQuests()
			for _, q := range quests {
				Expect(store.NewQuests(db, writer(), nil).Advance(context.Background(), &q.quest, q.user, "once", time.Now().UTC())).To(Succeed())
			}
			return func(ctx context.Context, small *gorm.DB, i int) error {
				q := quests[i]
				return store.NewQuests(small, writer(), nil).Claim(ctx, q.quest.TenantID, q.user, q.quest.ID,
					func(*quest.Quest) string { return "once" }, func(*quest.Quest) error { return nil },
					&quest.Claimed{QuestID: q.quest.ID, PrizeType: quest.PrizeBalance, PrizeAmount: q.quest.PrizeAmount, ClaimedAt: time.Now().UTC()})
			}
		}),
		Entry("refunding payments to the users' balances", func() testkit.ContendedCall {
			seeds := seedEach()
			payments := make([]string, len(seeds))
			for i, a := range seeds {
				payments[i] = uuid.NewString()
				Expect(db.Exec(`INSERT INTO payments (id, tenant_id, user_id, gateway, status, action, currency, amount_minor)
					VALUES (?, ?, ?, 'Balance', 'Confirmed', 'BuyPlan', 'IRR', 1000)`, payments[i], a.tenant, a.user).Error).To(Succeed())
			}
			return func(ctx context.Context, small *gorm.DB, i int) error {
				_, err := store.NewBilling(small, writer(), nil).Refund(ctx, payments[i], func(p *billing.Payment) (*billing.Refund, error) {
					return &billing.Refund{ID: uuid.NewString(), PaymentID: p.ID, TenantID: p.TenantID, UserID: p.UserID,
						AmountMinor: p.AmountMinor, Currency: p.Currency, RefundTo: billing.RefundToBalance, Reason: "contended",
						Status: billing.RefundCompleted, CreatedAt: time.Now().UTC()}, nil
				})
				return err
			}
		}),
	)
})

// seededQuest is a one-time quest of a seeded tenant, done in one step, and the tenant's user.
type seededQuest struct {
	quest quest.Quest
	user  string
}

// seedQuests inserts a one-time quest with a balance prize for each caller's account.
func seedQuests() []seededQuest {
	GinkgoHelper()
	out := make([]seededQuest, testkit.Contenders)
	for i, a := range seedEach() {
		q := quest.Quest{ID: uuid.NewString(), TenantID: a.tenant, Title: "Q", QuestType: quest.TypeOneTime, Trigger: "user.registered",
			TargetCount: 1, PrizeType: quest.PrizeBalance, PrizeAmount: 10}
		Expect(db.Exec(`INSERT INTO quests (id, tenant_id, title, quest_type, trigger, target_count, prize_type, prize_amount) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			q.ID, q.TenantID, q.Title, q.QuestType, q.Trigger, q.TargetCount, q.PrizeType, q.PrizeAmount).Error).To(Succeed())
		out[i] = seededQuest{quest: q, user: a.user}
	}
	return out
}
