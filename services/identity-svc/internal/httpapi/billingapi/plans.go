package billingapi

import (
	"context"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/wire"
)

// maxNotificationBytes bounds a gateway notification's body.
const maxNotificationBytes = 64 << 10

// Billing is what the handlers need of the billing service.
type Billing interface {
	Plans(ctx context.Context, a actor.Actor, scope string) ([]billing.Plan, error)
	Plan(ctx context.Context, a actor.Actor, planID string) (*billing.Plan, error)
	MyPlan(ctx context.Context, a actor.Actor) (*billing.UserPlan, error)
	Purchase(ctx context.Context, a actor.Actor, in billing.PurchaseInput) (billing.Purchased, error)
	Payments(ctx context.Context, a actor.Actor, page paging.Page) ([]billing.Payment, int64, error)
	Payment(ctx context.Context, a actor.Actor, paymentID string) (*billing.Payment, error)
	CompleteRedirect(ctx context.Context, authority, status string) (string, error)
	Notify(ctx context.Context, signature string, body []byte) error
	Refund(ctx context.Context, in billing.RefundInput) (*billing.Refund, error)
	CreateDiscount(ctx context.Context, a actor.Actor, d *billing.Discount) error
	Discounts(ctx context.Context, a actor.Actor, page paging.Page) ([]billing.Discount, int64, error)
	ValidateDiscount(ctx context.Context, a actor.Actor, code, planID string) (billing.Validation, error)
}

// ListPlans answers the active plans of the caller's tenant.
func (h *Handler) ListPlans(c echo.Context, params ListPlansParams) error {
	plans, err := h.billing.Plans(c.Request().Context(), caller.Of(c), string(deref(params.Scope)))
	if err != nil {
		return err
	}
	out := PlanList{Data: make([]Plan, len(plans))}
	for i := range plans {
		out.Data[i] = toPlanResponse(&plans[i])
	}
	return c.JSON(http.StatusOK, out)
}

// GetPlan answers one active plan of the caller's tenant.
func (h *Handler) GetPlan(c echo.Context, planID openapi_types.UUID) error {
	p, err := h.billing.Plan(c.Request().Context(), caller.Of(c), planID.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toPlanResponse(p))
}

// GetMyPlan answers the caller's current plan.
func (h *Handler) GetMyPlan(c echo.Context) error {
	up, err := h.billing.MyPlan(c.Request().Context(), caller.Of(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, UserPlan{
		Id: uuidOf(up.ID), PlanId: uuidOf(up.PlanID), PlanCode: up.PlanCode, PlanName: up.PlanName,
		InitialSecondsCharge: up.InitialSecondsCharge, RemainChargeSec: up.RemainChargeSec,
		MonthlyRendersUsed: up.MonthlyRendersUsed, StartsAt: up.StartsAt, ExpiresAt: up.ExpiresAt,
		CancelledAt: up.CancelledAt, AutoRenew: up.AutoRenew,
	})
}

// PurchasePlan buys a plan for the caller.
func (h *Handler) PurchasePlan(c echo.Context) error {
	var body PurchaseRequest
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	if err := requiredID("plan_id", body.PlanId); err != nil {
		return err
	}
	res, err := h.billing.Purchase(c.Request().Context(), caller.Of(c), billing.PurchaseInput{
		PlanID: body.PlanId.String(), Gateway: string(deref(body.Gateway)), DiscountCode: deref(body.DiscountCode),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, PurchaseResult{
		PaymentId: uuidOf(res.PaymentID), RedirectUrl: res.RedirectURL, Status: PurchaseResultStatus(res.Status),
	})
}

// ListPayments answers a page of the caller's payments.
func (h *Handler) ListPayments(c echo.Context, params ListPaymentsParams) error {
	page, err := paging.New(params.Page, params.PageSize)
	if err != nil {
		return err
	}
	ps, total, err := h.billing.Payments(c.Request().Context(), caller.Of(c), page)
	if err != nil {
		return err
	}
	out := PaymentPage{Data: make([]Payment, len(ps)), Meta: wire.ToMeta(page.Meta(int(total)))}
	for i := range ps {
		out.Data[i] = toPaymentResponse(&ps[i])
	}
	return c.JSON(http.StatusOK, out)
}

// GetPayment answers one of the caller's payments.
func (h *Handler) GetPayment(c echo.Context, paymentID openapi_types.UUID) error {
	p, err := h.billing.Payment(c.Request().Context(), caller.Of(c), paymentID.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toPaymentResponse(p))
}

// PaymentRedirectCallback settles a redirect-style payment and sends the user to the UI.
func (h *Handler) PaymentRedirectCallback(c echo.Context, params PaymentRedirectCallbackParams) error {
	target, err := h.billing.CompleteRedirect(c.Request().Context(), params.Authority, params.Status)
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusFound, target)
}

// PaymentWebhookCallback settles a payment from a webhook-style gateway's signed notification.
func (h *Handler) PaymentWebhookCallback(c echo.Context) error {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxNotificationBytes+1))
	if err != nil {
		return apperr.Wrap(err, apperr.Invalid, "invalid_notification", "the notification body could not be read")
	}
	if len(body) > maxNotificationBytes {
		return apperr.E(apperr.Invalid, "invalid_notification", "the notification body is too large")
	}
	if err := h.billing.Notify(c.Request().Context(), c.Request().Header.Get("Webhook-Signature"), body); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, GatewayNotificationAck{Received: true})
}

// RefundPayment refunds all or part of a payment (service callers only).
func (h *Handler) RefundPayment(c echo.Context) error {
	var body RefundRequest
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	if err := requiredID("payment_id", body.PaymentId); err != nil {
		return err
	}
	r, err := h.billing.Refund(c.Request().Context(), billing.RefundInput{
		PaymentID: body.PaymentId.String(), Reason: body.Reason, AmountMinor: deref(body.AmountMinor),
		RefundTo: string(deref(body.RefundTo)),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, RefundResult{RefundId: uuidOf(r.ID), Status: RefundResultStatus(r.Status)})
}
