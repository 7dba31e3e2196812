package billing

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// Store is what the billing service needs of persistence. Every method that changes a payment
// also writes its events to the outbox in the same transaction.
type Store interface {
	Plans(ctx context.Context, tenantID, scope string) ([]Plan, error)
	// Plan finds an active plan of the tenant; NotFound otherwise.
	Plan(ctx context.Context, tenantID, planID string) (*Plan, error)
	// PlanByID finds a plan, active or not; NotFound otherwise.
	PlanByID(ctx context.Context, planID string) (*Plan, error)
	// CurrentPlan finds the user's plan that is neither cancelled nor expired at now.
	CurrentPlan(ctx context.Context, userID string, now time.Time) (*UserPlan, error)
	// CreatePayment inserts a pending payment and counts a use of its discount; Conflict
	// discount_exhausted when the discount has no use left.
	CreatePayment(ctx context.Context, p *Payment) error
	SetAuthority(ctx context.Context, paymentID, authority string) error
	// PayFromBalance, in one transaction, counts the discount's use, takes the amount from the
	// user's balance (Conflict insufficient_balance when it is short), inserts the confirmed
	// payment and activates up.
	PayFromBalance(ctx context.Context, p *Payment, up *UserPlan) error
	PaymentByAuthority(ctx context.Context, authority string) (*Payment, error)
	// Payment finds one of the user's payments; NotFound otherwise.
	Payment(ctx context.Context, userID, paymentID string) (*Payment, error)
	Payments(ctx context.Context, userID string, page, size int) ([]Payment, int64, error)
	// Confirm moves a pending payment to Confirmed and activates up in one transaction; it
	// answers false, changing nothing, when the payment was no longer pending.
	Confirm(ctx context.Context, paymentID string, o Outcome, up *UserPlan, at time.Time) (bool, error)
	// Fail moves a pending payment to Failed and gives back its discount use; false when it was
	// no longer pending.
	Fail(ctx context.Context, paymentID, reason string, at time.Time) (bool, error)
	// Refund locks the payment, lets decide build the refund, and records it with its effect.
	Refund(ctx context.Context, paymentID string, decide func(p *Payment) (*Refund, error)) (*Refund, error)
	DiscountByCode(ctx context.Context, tenantID, code string) (*Discount, error)
	// CreateDiscount inserts d; Conflict when its code is taken in the tenant.
	CreateDiscount(ctx context.Context, d *Discount) error
	Discounts(ctx context.Context, tenantID string, page, size int) ([]Discount, int64, error)
}

// Options configure a Service.
type Options struct {
	// Gateways are the configured external gateways by name (Redirect, Webhook, Sandbox).
	Gateways map[string]Gateway
	// CallbackURL is the public address of GET /v1/payments/callback/redirect.
	CallbackURL string
	// ReturnURL is the UI page a user lands on after paying; payment_id and status are added.
	ReturnURL string
	// BalanceCurrency is the currency of user balances.
	BalanceCurrency string
	Now             func() time.Time
	NewID           func() string
}

// Service sells plans.
type Service struct {
	store Store
	o     Options
}

// NewService returns a Service.
func NewService(store Store, o Options) *Service { return &Service{store: store, o: o} }

// Plans lists the active plans of the actor's tenant in scope (User when empty); apperr
// Invalid for an unknown scope.
func (s *Service) Plans(ctx context.Context, a actor.Actor, scope string) ([]Plan, error) {
	if scope == "" {
		scope = ScopeUser
	}
	if scope != ScopeUser && scope != ScopeTenant {
		return nil, apperr.E(apperr.Invalid, "invalid_scope", "scope must be User or Tenant")
	}
	return s.store.Plans(ctx, a.TenantID, scope)
}

// Plan answers an active plan of the actor's tenant; apperr NotFound otherwise.
func (s *Service) Plan(ctx context.Context, a actor.Actor, planID string) (*Plan, error) {
	return s.store.Plan(ctx, a.TenantID, planID)
}

// MyPlan answers the actor's current plan; apperr NotFound (code no_plan) when there is none.
func (s *Service) MyPlan(ctx context.Context, a actor.Actor) (*UserPlan, error) {
	up, err := s.store.CurrentPlan(ctx, a.UserID, s.o.Now())
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.E(apperr.NotFound, "no_plan", "the user has no current plan")
	}
	return up, err
}

// PurchaseInput is a request to buy a plan.
type PurchaseInput struct {
	PlanID       string
	Gateway      string
	DiscountCode string
}

// Purchased is a started (or, paid from the balance, finished) purchase.
type Purchased struct {
	PaymentID   string
	RedirectURL string
	Status      string
}

// Purchase buys a plan for the actor. With the Balance gateway, or when a discount makes the
// plan free, the balance pays and the plan is active on return; otherwise the payment is
// pending and the answer says where to send the user. It returns apperr NotFound for an
// unknown plan, Forbidden when a user who is not an administrator buys a Tenant plan, Invalid for an unconfigured gateway, a discount code that does not apply or a
// currency the balance does not hold, Conflict when the balance is short or the discount used
// up, and Unavailable when the gateway fails.
func (s *Service) Purchase(ctx context.Context, a actor.Actor, in PurchaseInput) (Purchased, error) {
	plan, err := s.store.Plan(ctx, a.TenantID, in.PlanID)
	if err != nil {
		return Purchased{}, err
	}
	if plan.Scope == ScopeTenant && !a.IsAdmin() {
		return Purchased{}, apperr.E(apperr.Forbidden, "forbidden", "only the tenant's administrators buy tenant plans")
	}
	if in.Gateway == "" {
		in.Gateway = GatewayBalance
	}
	gw, ok := s.o.Gateways[in.Gateway]
	if in.Gateway != GatewayBalance && !ok {
		return Purchased{}, check.Field("gateway_unavailable", "the payment gateway "+in.Gateway+" is not configured", "gateway", "is not configured")
	}
	now := s.o.Now()
	p := &Payment{
		ID: s.o.NewID(), TenantID: a.TenantID, UserID: a.UserID, PlanID: &plan.ID, Gateway: in.Gateway,
		Status: StatusPending, Action: ActionPlanPurchase, Currency: plan.Currency, Title: "Plan " + plan.Name,
		Description: plan.Description, AmountMinor: plan.PriceMinor, CreatedAt: now,
	}
	if err := s.applyDiscount(ctx, a, plan, in.DiscountCode, p, now); err != nil {
		return Purchased{}, err
	}
	if p.Gateway == GatewayBalance || p.AmountMinor == 0 {
		return s.payFromBalance(ctx, plan, p, now)
	}
	if err := s.store.CreatePayment(ctx, p); err != nil {
		return Purchased{}, err
	}
	checkout, err := gw.Start(ctx, p, s.o.CallbackURL)
	if err != nil {
		if _, ferr := s.store.Fail(context.WithoutCancel(ctx), p.ID, "the gateway could not start the payment", s.o.Now()); ferr != nil {
			return Purchased{}, errors.Join(err, ferr)
		}
		return Purchased{}, err
	}
	if err := s.store.SetAuthority(ctx, p.ID, checkout.Authority); err != nil {
		return Purchased{}, err
	}
	return Purchased{PaymentID: p.ID, RedirectURL: checkout.RedirectURL, Status: StatusPending}, nil
}

func (s *Service) applyDiscount(ctx context.Context, a actor.Actor, plan *Plan, code string, p *Payment, now time.Time) error {
	if code == "" {
		return nil
	}
	d, err := s.store.DiscountByCode(ctx, a.TenantID, NormalizeCode(code))
	reason := ReasonNotFound
	if err == nil {
		reason = d.Refusal(now, plan.ID)
	} else if !apperr.Is(err, apperr.NotFound) {
		return err
	}
	if reason != "" {
		return check.Field("discount_"+reason, "the discount code does not apply ("+strings.ReplaceAll(reason, "_", " ")+")", "discount_code", strings.ReplaceAll(reason, "_", " "))
	}
	minor, bonus := d.Apply(plan)
	p.DiscountID, p.DiscountCode, p.DiscountMinor, p.BonusSeconds = &d.ID, d.Code, minor, bonus
	p.AmountMinor -= minor
	return nil
}

func (s *Service) payFromBalance(ctx context.Context, plan *Plan, p *Payment, now time.Time) (Purchased, error) {
	if p.AmountMinor > 0 && plan.Currency != s.o.BalanceCurrency {
		return Purchased{}, apperr.E(apperr.Invalid, "currency_mismatch", "the balance is held in "+s.o.BalanceCurrency+", the plan is priced in "+plan.Currency)
	}
	p.Gateway, p.Status, p.ConfirmedAt = GatewayBalance, StatusConfirmed, &now
	if err := s.store.PayFromBalance(ctx, p, s.userPlan(plan, p, now)); err != nil {
		return Purchased{}, err
	}
	return Purchased{PaymentID: p.ID, RedirectURL: s.resultURL(p.ID, StatusConfirmed), Status: StatusConfirmed}, nil
}

// userPlan is the plan a confirmed payment activates: it starts now and lasts the plan's period.
func (s *Service) userPlan(plan *Plan, p *Payment, now time.Time) *UserPlan {
	seconds := plan.SecondsCharge + p.BonusSeconds
	return &UserPlan{
		ID: s.o.NewID(), TenantID: p.TenantID, UserID: p.UserID, PlanID: plan.ID, PlanCode: plan.Code,
		PlanName: plan.Name, PaymentID: &p.ID, InitialSecondsCharge: seconds, RemainChargeSec: seconds,
		StartsAt: now, ExpiresAt: now.AddDate(0, plan.Months(), 0),
	}
}

// resultURL is the UI page a purchase ends on.
func (s *Service) resultURL(paymentID, status string) string {
	q := url.Values{"payment_id": {paymentID}, "status": {status}}
	sep := "?"
	if strings.Contains(s.o.ReturnURL, "?") {
		sep = "&"
	}
	return s.o.ReturnURL + sep + q.Encode()
}

// StatusUnknown is the status a redirect callback reports for an authority it does not know.
const StatusUnknown = "Unknown"

// CompleteRedirect handles a user's return from a redirect-style gateway and answers the UI
// page to send them to. A pending payment is verified with its gateway (a status other than
// OK fails it without asking) and confirmed, with its plan, or failed; a payment that is no
// longer pending is left alone, so a replayed callback never confirms twice. When the gateway
// cannot be reached the payment stays pending.
func (s *Service) CompleteRedirect(ctx context.Context, authority, status string) (string, error) {
	p, err := s.store.PaymentByAuthority(ctx, authority)
	if apperr.Is(err, apperr.NotFound) {
		return s.resultURL("", StatusUnknown), nil
	}
	if err != nil {
		return "", err
	}
	v, ok := s.o.Gateways[p.Gateway].(Verifier)
	if p.Status != StatusPending || !ok {
		return s.resultURL(p.ID, p.Status), nil
	}
	o := Outcome{FailureReason: "the payment was cancelled at the gateway"}
	if status == "OK" {
		if o, err = v.Verify(ctx, p); err != nil {
			return s.resultURL(p.ID, StatusPending), nil
		}
	}
	if err := s.settle(ctx, p, o); err != nil {
		return "", err
	}
	if p, err = s.store.Payment(ctx, p.UserID, p.ID); err != nil {
		return "", err
	}
	return s.resultURL(p.ID, p.Status), nil
}

// Notify handles a webhook-style gateway's signed notification; a success for another amount
// than the payment's fails the payment. It returns apperr
// Unauthenticated for a bad signature, Invalid for an unreadable body and NotFound when no
// webhook gateway is configured or the checkout is unknown; a replay changes nothing.
func (s *Service) Notify(ctx context.Context, signature string, body []byte) error {
	parser, ok := s.o.Gateways[GatewayWebhook].(NotificationParser)
	if !ok {
		return apperr.E(apperr.NotFound, "gateway_unavailable", "no webhook-style gateway is configured")
	}
	n, err := parser.ParseNotification(signature, body, s.o.Now())
	if err != nil {
		return err
	}
	p, err := s.store.PaymentByAuthority(ctx, n.Authority)
	if err != nil {
		return err
	}
	if p.Gateway != GatewayWebhook {
		return apperr.E(apperr.NotFound, "payment_not_found", "no payment has this checkout")
	}
	if p.Status != StatusPending {
		return nil
	}
	if n.Outcome.Paid && n.AmountMinor != nil && *n.AmountMinor != p.AmountMinor {
		n.Outcome = Outcome{FailureReason: "the gateway collected another amount than the payment's"}
	}
	return s.settle(ctx, p, n.Outcome)
}

// settle confirms (activating the plan) or fails a pending payment.
func (s *Service) settle(ctx context.Context, p *Payment, o Outcome) error {
	now := s.o.Now()
	if !o.Paid {
		_, err := s.store.Fail(ctx, p.ID, o.FailureReason, now)
		return err
	}
	plan, err := s.store.PlanByID(ctx, *p.PlanID)
	if err != nil {
		return err
	}
	_, err = s.store.Confirm(ctx, p.ID, o, s.userPlan(plan, p, now), now)
	return err
}

// Payments lists one validated page of the actor's payments, newest first.
func (s *Service) Payments(ctx context.Context, a actor.Actor, p paging.Page) ([]Payment, int64, error) {
	return s.store.Payments(ctx, a.UserID, p.Number, p.Size)
}

// Payment answers one of the actor's payments; apperr NotFound for anyone else's.
func (s *Service) Payment(ctx context.Context, a actor.Actor, paymentID string) (*Payment, error) {
	return s.store.Payment(ctx, a.UserID, paymentID)
}

// RefundInput is a refund request.
type RefundInput struct {
	PaymentID   string
	Reason      string
	AmountMinor int64
	RefundTo    string
}

// Refund gives back all (AmountMinor 0) or part of a confirmed payment to the balance, through
// the original gateway or as plan time. It returns apperr Invalid for a bad request, NotFound
// for an unknown payment, Conflict when the payment is not refundable or the amount exceeds
// what is left, and Unavailable when the gateway fails.
func (s *Service) Refund(ctx context.Context, in RefundInput) (*Refund, error) {
	if in.RefundTo == "" {
		in.RefundTo = RefundToBalance
	}
	if in.RefundTo != RefundToBalance && in.RefundTo != RefundToOriginalMethod && in.RefundTo != RefundToPlan {
		return nil, apperr.E(apperr.Invalid, "invalid_refund", "refund_to must be Balance, OriginalMethod or Plan")
	}
	if r := strings.TrimSpace(in.Reason); r == "" || len(r) > 500 || in.AmountMinor < 0 {
		return nil, apperr.E(apperr.Invalid, "invalid_refund", "a reason of 1 to 500 characters and a positive amount are required")
	}
	return s.store.Refund(ctx, in.PaymentID, func(p *Payment) (*Refund, error) {
		if p.Status != StatusConfirmed && p.Status != StatusPartiallyRefunded {
			return nil, apperr.E(apperr.Conflict, "payment_not_refundable", "only a confirmed payment can be refunded")
		}
		left := p.AmountMinor - p.RefundedMinor
		amount := in.AmountMinor
		if amount == 0 {
			amount = left
		}
		if amount <= 0 || amount > left {
			return nil, apperr.E(apperr.Conflict, "refund_exceeds_payment", "the refund exceeds what is left of the payment")
		}
		if in.RefundTo == RefundToOriginalMethod && p.Gateway != GatewayBalance {
			gw, ok := s.o.Gateways[p.Gateway]
			if !ok {
				return nil, apperr.E(apperr.Unavailable, "gateway_unavailable", "the payment's gateway is no longer configured")
			}
			if err := gw.Refund(ctx, p, amount); err != nil {
				return nil, err
			}
		}
		return &Refund{
			ID: s.o.NewID(), PaymentID: p.ID, TenantID: p.TenantID, UserID: p.UserID, AmountMinor: amount,
			Currency: p.Currency, RefundTo: in.RefundTo, Reason: strings.TrimSpace(in.Reason), Status: RefundCompleted,
			CreatedAt: s.o.Now(),
		}, nil
	})
}
