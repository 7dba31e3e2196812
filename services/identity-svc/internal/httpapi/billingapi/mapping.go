package billingapi

import (
	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
)

// uuidOf parses an id the service made; ids are always valid UUIDs.
func uuidOf(id string) openapi_types.UUID { return uuid.MustParse(id) }

func toPlanResponse(p *billing.Plan) Plan {
	features := p.Features
	if features == nil {
		features = map[string]any{}
	}
	return Plan{
		Id: uuidOf(p.ID), Code: p.Code, Name: p.Name, Description: p.Description, Scope: PlanScope(p.Scope),
		Currency: p.Currency, BillingPeriod: PlanBillingPeriod(p.BillingPeriod), MaxResolution: p.MaxResolution,
		Icon: p.Icon, PriceMinor: p.PriceMinor, BeforePriceMinor: p.BeforePriceMinor, SecondsCharge: p.SecondsCharge,
		StorageGb: p.StorageGB, ParallelRenders: p.ParallelRenders, MonthlyRendersQuota: p.MonthlyRendersQuota,
		RenderSpeedFactor: p.RenderSpeedFactor, IsFeatured: p.IsFeatured, Features: features,
	}
}

func toPaymentResponse(p *billing.Payment) Payment {
	out := Payment{
		Id: uuidOf(p.ID), Gateway: PaymentGateway(p.Gateway), Status: PaymentStatus(p.Status),
		Action: PaymentAction(p.Action), Currency: p.Currency, Title: p.Title, Description: p.Description,
		CardLast4: p.CardLast4, AmountMinor: p.AmountMinor, DiscountMinor: p.DiscountMinor,
		RefundedMinor: p.RefundedMinor, ConfirmedAt: p.ConfirmedAt, FailedAt: p.FailedAt,
		FailureReason: p.FailureReason, CreatedAt: p.CreatedAt,
	}
	if p.PlanID != nil {
		id := uuidOf(*p.PlanID)
		out.PlanId = &id
	}
	return out
}

func toDiscountResponse(d *billing.Discount) Discount {
	out := Discount{
		Id: uuidOf(d.ID), Name: d.Name, Code: d.Code, Kind: DiscountKind(d.Kind), Value: d.Value,
		OwnerProfitPercentage: d.OwnerProfitPercentage, MaxUseCount: d.MaxUseCount, UseCount: d.UseCount,
		AppliesToPlanIds: make([]openapi_types.UUID, len(d.AppliesToPlanIDs)), StartsAt: d.StartsAt,
		ExpiresAt: d.ExpiresAt, CreatedAt: d.CreatedAt,
	}
	for i, id := range d.AppliesToPlanIDs {
		out.AppliesToPlanIds[i] = uuidOf(id)
	}
	if d.OwnerUserID != nil {
		id := uuidOf(*d.OwnerUserID)
		out.OwnerUserId = &id
	}
	return out
}
