// Package billing sells plans: it lists a tenant's plans, starts payments through payment
// gateways or the user's balance, confirms or fails them from gateway callbacks (idempotently,
// activating the bought plan in the same transaction), refunds them, and applies discount codes.
// Its methods return *apperr.Error kinds: Invalid, NotFound, Conflict and Unavailable.
package billing

import (
	"time"
)

// Plan scopes.
const (
	ScopeUser   = "User"
	ScopeTenant = "Tenant"
)

// Gateway names. Redirect, Webhook and Sandbox are external (or simulated) gateways; Balance
// pays from the user's balance.
const (
	GatewayRedirect = "Redirect"
	GatewayWebhook  = "Webhook"
	GatewaySandbox  = "Sandbox"
	GatewayBalance  = "Balance"
)

// Payment statuses.
const (
	StatusPending           = "Pending"
	StatusConfirmed         = "Confirmed"
	StatusFailed            = "Failed"
	StatusPartiallyRefunded = "PartiallyRefunded"
	StatusRefunded          = "Refunded"
)

// ActionPlanPurchase is the action of a payment that buys a plan.
const ActionPlanPurchase = "PlanPurchase"

// Refund destinations.
const (
	RefundToBalance        = "Balance"
	RefundToOriginalMethod = "OriginalMethod"
	RefundToPlan           = "Plan"
)

// RefundCompleted is the status of a refund that has been carried out.
const RefundCompleted = "Completed"

// Plan is something a user (or a tenant) can buy for a billing period.
type Plan struct {
	ID                  string
	TenantID            string
	Code                string
	Name                string
	Description         string
	Scope               string
	Currency            string
	BillingPeriod       string
	MaxResolution       string
	Icon                string
	PriceMinor          int64
	BeforePriceMinor    *int64
	SecondsCharge       int
	StorageGB           int
	ParallelRenders     int
	MonthlyRendersQuota *int
	RenderSpeedFactor   float64
	IsFeatured          bool
	Features            map[string]any
}

// Months is the length of the plan's billing period in months.
func (p Plan) Months() int {
	switch p.BillingPeriod {
	case "Quarterly":
		return 3
	case "Yearly":
		return 12
	default:
		return 1
	}
}

// UserPlan is a plan a user holds, from a payment or a gift.
type UserPlan struct {
	ID                   string
	TenantID             string
	UserID               string
	PlanID               string
	PlanCode             string
	PlanName             string
	PaymentID            *string
	InitialSecondsCharge int
	RemainChargeSec      int
	MonthlyRendersUsed   int
	StartsAt             time.Time
	ExpiresAt            time.Time
	CancelledAt          *time.Time
	AutoRenew            bool
}

// SupersededBy reports whether activating a new plan at ends this one: a user has one plan at
// a time, so every plan neither cancelled nor expired by then is cancelled at that moment.
func (up *UserPlan) SupersededBy(at time.Time) bool {
	return up.CancelledAt == nil && up.ExpiresAt.After(at)
}

// Payment is one attempt to pay for something, through a gateway or the balance.
type Payment struct {
	ID            string
	TenantID      string
	UserID        string
	PlanID        *string
	Gateway       string
	Status        string
	Action        string
	Currency      string
	Title         string
	Description   string
	CardLast4     string
	AmountMinor   int64
	DiscountMinor int64
	DiscountID    *string
	DiscountCode  string
	// BonusSeconds are render seconds a RenderCredits discount adds to the bought plan.
	BonusSeconds  int
	RefundedMinor int64
	// Authority is the gateway's id of the checkout, matched by its callback.
	Authority     string
	GatewayRef    string
	ConfirmedAt   *time.Time
	FailedAt      *time.Time
	FailureReason *string
	CreatedAt     time.Time
}

// Refund gives back all or part of a payment.
type Refund struct {
	ID          string
	PaymentID   string
	TenantID    string
	UserID      string
	AmountMinor int64
	Currency    string
	RefundTo    string
	Reason      string
	Status      string
	CreatedAt   time.Time
}

// CreditsBalance reports whether the refund goes to the user's balance: a Balance refund, or an
// OriginalMethod refund of a payment made from the balance.
func (r *Refund) CreditsBalance(p *Payment) bool {
	return r.RefundTo == RefundToBalance || (r.RefundTo == RefundToOriginalMethod && p.Gateway == GatewayBalance)
}

// PlanTime is the plan time a Plan refund gives back: the refunded share of the period the
// payment bought.
func (r *Refund) PlanTime(p *Payment, period time.Duration) time.Duration {
	return time.Duration(float64(period) * float64(r.AmountMinor) / float64(p.AmountMinor))
}

// Outcome is a gateway's verdict on a payment.
type Outcome struct {
	Paid          bool
	Ref           string
	CardLast4     string
	FailureReason string
}
