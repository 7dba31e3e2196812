package app

import (
	"context"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
	"github.com/motionstudio/platform/services/identity-svc/internal/bus"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/billingapi"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/gateway"
	"github.com/motionstudio/platform/services/identity-svc/internal/quest"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
)

// newBillingHandler wires the billing side of the service (plans, payments, discounts, quests
// and gifts) on a's database, and adds the quest consumer to a's workers.
func newBillingHandler(a *App, cfg config.Config, writer *outbox.Writer) *billingapi.Handler {
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
	svc := billing.NewService(store.NewBilling(a.DB, writer, a.heldAccounts), billing.Options{
		Gateways: gateways, CallbackURL: bcfg.CallbackBaseURL + "/redirect", ReturnURL: bcfg.ReturnURL,
		BalanceCurrency: cfg.BalanceCurrency, Now: service.Now, NewID: service.NewID,
	})
	quests := quest.NewService(store.NewQuests(a.DB, writer, a.heldAccounts), service.Now, service.NewID)
	a.Workers = append(a.Workers, service.WorkerFunc(func(ctx context.Context) error { return bus.ConsumeQuestSteps(ctx, a.Bus, quests) }))
	return billingapi.NewHandler(svc, quests)
}
