package app

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbox"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
	"github.com/motionstudio/platform/services/identity-svc/internal/gateway"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/billingapi"
	"github.com/motionstudio/platform/services/identity-svc/internal/quest"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
)

// billingParts are the plan, payment, discount, quest and gift services and their background
// work.
type billingParts struct {
	handler *billingapi.Handler
	workers []func(ctx context.Context) error
}

// newBillingParts wires the billing side of the service on a's database and bus.
func newBillingParts(a *App, cfg config.Config, writer *outbox.Writer) *billingParts {
	bcfg := cfg.Billing
	gateways := map[string]billing.Gateway{}
	if bcfg.SandboxEnabled {
		gateways[billing.GatewaySandbox] = gateway.Sandbox{}
	}
	if bcfg.RedirectAPIURL != "" {
		gateways[billing.GatewayRedirect] = gateway.NewRedirect(gateway.RedirectOptions{
			APIURL: bcfg.RedirectAPIURL, StartURL: bcfg.RedirectStartURL, MerchantID: bcfg.RedirectMerchant,
		})
	}
	if bcfg.WebhookAPIURL != "" {
		gateways[billing.GatewayWebhook] = gateway.NewWebhook(gateway.WebhookOptions{
			APIURL: bcfg.WebhookAPIURL, APIKey: bcfg.WebhookAPIKey, Secret: bcfg.WebhookSecret, ReturnURL: bcfg.ReturnURL,
		})
	}
	svc := billing.NewService(store.NewBilling(a.db, writer, a.heldAccounts), billing.Options{
		Gateways: gateways, CallbackURL: bcfg.CallbackBaseURL + "/redirect", ReturnURL: bcfg.ReturnURL,
		BalanceCurrency: cfg.BalanceCurrency, Now: now, NewID: newID,
	})
	quests := quest.NewService(store.NewQuests(a.db, writer, a.heldAccounts), now, newID)
	return &billingParts{
		handler: billingapi.NewHandler(svc, quests),
		workers: []func(ctx context.Context) error{func(ctx context.Context) error { return consumeQuestSteps(ctx, a, writer) }},
	}
}

// consumeQuestSteps moves quests from identity events, each event once (outbox.Once), in the
// transaction that records it. The consumer reads every identity event (one filter subject,
// which every NATS server version supports) and acknowledges the ones quests do not count; the
// catalogue's consumer entry names both. A quest's trigger is the event's webhook name
// (user.registered, payment.confirmed, plan.activated).
func consumeQuestSteps(ctx context.Context, a *App, writer *outbox.Writer) error {
	c, ok := events.Durable(events.DurableQuestProgress)
	if !ok {
		return fmt.Errorf("app: %s is not in the consumer catalogue", events.DurableQuestProgress)
	}
	spec := natsx.ConsumerSpec{Stream: c.Stream, Durable: c.Name, FilterSubjects: []string{c.Filter}}
	return a.bus.Consume(ctx, spec, func(ctx context.Context, m natsx.Message) error {
		if !c.Handles(m.Subject) {
			return nil
		}
		msg, err := events.Decode(m.Subject, m.Data)
		if err != nil {
			return natsx.Permanent(err)
		}
		who, ok := msg.(interface {
			GetTenantId() string
			GetUserId() string
		})
		entry, _ := events.Lookup(m.Subject)
		if !ok || who.GetUserId() == "" {
			return natsx.Permanent(fmt.Errorf("app: %s event %s names no user", m.Subject, m.ID))
		}
		step := quest.Step{TenantID: who.GetTenantId(), UserID: who.GetUserId(), Trigger: entry.WebhookEvent, At: m.Time}
		_, err = outbox.Once(ctx, a.db, events.DurableQuestProgress, m.ID, func(tx *gorm.DB) error {
			return quest.NewService(store.NewQuests(tx, writer, a.heldAccounts), now, newID).Record(ctx, step)
		})
		return err
	})
}
