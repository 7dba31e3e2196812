// Package billingapi is identity-svc's HTTP adapter for plans, payments, discounts, quests and
// gifts (the operations tagged Plans, Payments, Discounts, Quests and Gifts).
package billingapi

import (
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/httpx"
)

// Handler implements ServerInterface.
type Handler struct {
	billing Billing
	quests  Quests
}

// NewHandler returns a Handler over the billing and quest services.
func NewHandler(b Billing, q Quests) *Handler {
	return &Handler{billing: b, quests: q}
}

// Policies says who may call each operation of this package. Gateway callbacks are public
// (the redirect one is verified with the gateway, the webhook one by its signature); refunds
// take a service token; everything else is the calling user's, and the domain confines
// administrators' discount operations to their own tenant.
func Policies(v *authn.Verifier) httpx.Policies {
	user := httpx.Allow(v.RequireUser())
	return httpx.Policies{
		"listPlans":               user,
		"getPlan":                 user,
		"getMyPlan":               user,
		"purchasePlan":            user,
		"listPayments":            user,
		"getPayment":              user,
		"paymentRedirectCallback": httpx.Public(),
		"paymentWebhookCallback":  httpx.Public(),
		"refundPayment":           httpx.Allow(v.RequireService()),
		"listDiscounts":           user,
		"createDiscount":          user,
		"validateDiscount":        user,
		"listQuests":              user,
		"claimQuest":              user,
		"listEarnedGifts":         user,
		"useEarnedGift":           user,
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// requiredID refuses an absent (zero) required uuid field of a body with apperr Invalid.
func requiredID(field string, id uuid.UUID) error {
	if id == uuid.Nil {
		return check.Field("validation_failed", field+" is required", field, "is required")
	}
	return nil
}
