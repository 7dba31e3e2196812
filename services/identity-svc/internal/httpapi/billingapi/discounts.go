package billingapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/wire"
)

// CreateDiscount creates a discount code in the caller's tenant (administrators only).
func (h *Handler) CreateDiscount(c echo.Context) error {
	var body DiscountCreate
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	d := &billing.Discount{
		Name: body.Name, Code: body.Code, Kind: string(body.Kind), Value: body.Value,
		OwnerProfitPercentage: body.OwnerProfitPercentage, MaxUseCount: body.MaxUseCount,
		StartsAt: body.StartsAt, ExpiresAt: body.ExpiresAt,
	}
	if body.OwnerUserId != nil {
		id := body.OwnerUserId.String()
		d.OwnerUserID = &id
	}
	for _, id := range deref(body.AppliesToPlanIds) {
		d.AppliesToPlanIDs = append(d.AppliesToPlanIDs, id.String())
	}
	if err := h.billing.CreateDiscount(c.Request().Context(), caller.Of(c), d); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toDiscountResponse(d))
}

// ListDiscounts answers a page of the caller's tenant's discount codes (administrators only).
func (h *Handler) ListDiscounts(c echo.Context, params ListDiscountsParams) error {
	page, err := paging.New(params.Page, params.PageSize)
	if err != nil {
		return err
	}
	ds, total, err := h.billing.Discounts(c.Request().Context(), caller.Of(c), page)
	if err != nil {
		return err
	}
	out := DiscountPage{Data: make([]Discount, len(ds)), Meta: wire.ToMeta(page.Meta(int(total)))}
	for i := range ds {
		out.Data[i] = toDiscountResponse(&ds[i])
	}
	return c.JSON(http.StatusOK, out)
}

// ValidateDiscount answers what a discount code would give.
func (h *Handler) ValidateDiscount(c echo.Context) error {
	var body DiscountValidateRequest
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	planID := ""
	if body.PlanId != nil {
		planID = body.PlanId.String()
	}
	v, err := h.billing.ValidateDiscount(c.Request().Context(), caller.Of(c), body.Code, planID)
	if err != nil {
		return err
	}
	out := DiscountValidation{
		Valid: v.Valid, DiscountMinor: v.DiscountMinor, BonusSeconds: v.BonusSeconds, Kind: v.Kind, Value: v.Value,
	}
	if v.Reason != "" {
		r := DiscountValidationReason(v.Reason)
		out.Reason = &r
	}
	return c.JSON(http.StatusOK, out)
}
