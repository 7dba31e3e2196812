package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
)

// Billing implements billing.Store.
type Billing struct {
	db      *gorm.DB
	outbox  *outbox.Writer
	changes AccountChanges
}

// NewBilling returns a Billing store writing its events through w and telling changes (nil: no
// one) of the users whose balance a payment or refund changes.
func NewBilling(db *gorm.DB, w *outbox.Writer, changes AccountChanges) *Billing {
	return &Billing{db: db, outbox: w, changes: heard(changes)}
}

// jsonObject is a free-form object kept in a jsonb column.
type jsonObject map[string]any

// Value encodes the object as JSON.
func (o jsonObject) Value() (driver.Value, error) {
	if o == nil {
		o = jsonObject{}
	}
	b, err := json.Marshal(map[string]any(o))
	return string(b), err
}

// Scan decodes a JSON object.
func (o *jsonObject) Scan(src any) error {
	switch v := src.(type) {
	case []byte:
		return json.Unmarshal(v, (*map[string]any)(o))
	case string:
		return json.Unmarshal([]byte(v), (*map[string]any)(o))
	case nil:
		*o = jsonObject{}
		return nil
	default:
		return fmt.Errorf("store: scan %T into an object", src)
	}
}

type planModel struct {
	ID                  string `gorm:"primaryKey"`
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
	StorageGb           int
	ParallelRenders     int
	MonthlyRendersQuota *int
	RenderSpeedFactor   float64
	IsFeatured          bool
	Features            jsonObject `gorm:"type:jsonb"`
	IsActive            bool
}

func (planModel) TableName() string { return "plans" }

func (m planModel) toDomain() billing.Plan {
	return billing.Plan{
		ID: m.ID, TenantID: m.TenantID, Code: m.Code, Name: m.Name, Description: m.Description, Scope: m.Scope,
		Currency: m.Currency, BillingPeriod: m.BillingPeriod, MaxResolution: m.MaxResolution, Icon: m.Icon,
		PriceMinor: m.PriceMinor, BeforePriceMinor: m.BeforePriceMinor, SecondsCharge: m.SecondsCharge,
		StorageGB: m.StorageGb, ParallelRenders: m.ParallelRenders, MonthlyRendersQuota: m.MonthlyRendersQuota,
		RenderSpeedFactor: m.RenderSpeedFactor, IsFeatured: m.IsFeatured, Features: m.Features,
	}
}

type userPlanModel struct {
	ID                   string `gorm:"primaryKey"`
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

func (userPlanModel) TableName() string { return "user_plans" }

func (m userPlanModel) toDomain() *billing.UserPlan {
	up := billing.UserPlan(m)
	return &up
}

type paymentModel struct {
	ID            string `gorm:"primaryKey"`
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
	BonusSeconds  int
	RefundedMinor int64
	Authority     *string
	GatewayRef    string
	ConfirmedAt   *time.Time
	FailedAt      *time.Time
	FailureReason *string
	CreatedAt     time.Time
}

func (paymentModel) TableName() string { return "payments" }

func toPaymentModel(p *billing.Payment) paymentModel {
	m := paymentModel{
		ID: p.ID, TenantID: p.TenantID, UserID: p.UserID, PlanID: p.PlanID, Gateway: p.Gateway, Status: p.Status,
		Action: p.Action, Currency: p.Currency, Title: p.Title, Description: p.Description, CardLast4: p.CardLast4,
		AmountMinor: p.AmountMinor, DiscountMinor: p.DiscountMinor, DiscountID: p.DiscountID,
		DiscountCode: p.DiscountCode, BonusSeconds: p.BonusSeconds, RefundedMinor: p.RefundedMinor,
		GatewayRef: p.GatewayRef, ConfirmedAt: p.ConfirmedAt, FailedAt: p.FailedAt, FailureReason: p.FailureReason,
		CreatedAt: p.CreatedAt,
	}
	if p.Authority != "" {
		m.Authority = &p.Authority
	}
	return m
}

func (m paymentModel) toDomain() *billing.Payment {
	p := &billing.Payment{
		ID: m.ID, TenantID: m.TenantID, UserID: m.UserID, PlanID: m.PlanID, Gateway: m.Gateway, Status: m.Status,
		Action: m.Action, Currency: m.Currency, Title: m.Title, Description: m.Description, CardLast4: m.CardLast4,
		AmountMinor: m.AmountMinor, DiscountMinor: m.DiscountMinor, DiscountID: m.DiscountID,
		DiscountCode: m.DiscountCode, BonusSeconds: m.BonusSeconds, RefundedMinor: m.RefundedMinor,
		GatewayRef: m.GatewayRef, ConfirmedAt: m.ConfirmedAt, FailedAt: m.FailedAt, FailureReason: m.FailureReason,
		CreatedAt: m.CreatedAt,
	}
	if m.Authority != nil {
		p.Authority = *m.Authority
	}
	return p
}

type refundModel struct {
	ID          string `gorm:"primaryKey"`
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

func (refundModel) TableName() string { return "refunds" }

type discountModel struct {
	ID                    string `gorm:"primaryKey"`
	TenantID              string
	Name                  string
	Code                  string
	Kind                  string
	Value                 float64
	OwnerUserID           *string
	OwnerProfitPercentage *float64
	MaxUseCount           *int
	UseCount              int
	AppliesToPlanIds      jsonList `gorm:"type:jsonb"`
	StartsAt              *time.Time
	ExpiresAt             *time.Time
	CreatedBy             string
	CreatedAt             time.Time
}

func (discountModel) TableName() string { return "discounts" }

func toDiscountModel(d *billing.Discount) discountModel {
	return discountModel{
		ID: d.ID, TenantID: d.TenantID, Name: d.Name, Code: d.Code, Kind: d.Kind, Value: d.Value,
		OwnerUserID: d.OwnerUserID, OwnerProfitPercentage: d.OwnerProfitPercentage, MaxUseCount: d.MaxUseCount,
		UseCount: d.UseCount, AppliesToPlanIds: jsonList(d.AppliesToPlanIDs), StartsAt: d.StartsAt,
		ExpiresAt: d.ExpiresAt, CreatedBy: d.CreatedBy, CreatedAt: d.CreatedAt,
	}
}

func (m discountModel) toDomain() billing.Discount {
	return billing.Discount{
		ID: m.ID, TenantID: m.TenantID, Name: m.Name, Code: m.Code, Kind: m.Kind, Value: m.Value,
		OwnerUserID: m.OwnerUserID, OwnerProfitPercentage: m.OwnerProfitPercentage, MaxUseCount: m.MaxUseCount,
		UseCount: m.UseCount, AppliesToPlanIDs: []string(m.AppliesToPlanIds), StartsAt: m.StartsAt,
		ExpiresAt: m.ExpiresAt, CreatedBy: m.CreatedBy, CreatedAt: m.CreatedAt,
	}
}

// Plans lists the tenant's active plans of a scope, cheapest first.
func (s *Billing) Plans(ctx context.Context, tenantID, scope string) ([]billing.Plan, error) {
	var ms []planModel
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND scope = ? AND is_active", tenantID, scope).
		Order("price_minor, code").Find(&ms).Error
	if err != nil {
		return nil, pgdb.Translate(err, "plans")
	}
	out := make([]billing.Plan, len(ms))
	for i, m := range ms {
		out[i] = m.toDomain()
	}
	return out, nil
}

// Plan finds an active plan of the tenant; apperr NotFound otherwise.
func (s *Billing) Plan(ctx context.Context, tenantID, planID string) (*billing.Plan, error) {
	var m planModel
	if err := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ? AND is_active", tenantID, planID).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "plan")
	}
	p := m.toDomain()
	return &p, nil
}

// PlanByID finds a plan, active or not; apperr NotFound otherwise.
func (s *Billing) PlanByID(ctx context.Context, planID string) (*billing.Plan, error) {
	var m planModel
	if err := s.db.WithContext(ctx).Where("id = ?", planID).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "plan")
	}
	p := m.toDomain()
	return &p, nil
}

// CurrentPlan finds the user's latest plan that is neither cancelled nor expired at now;
// apperr NotFound when there is none.
func (s *Billing) CurrentPlan(ctx context.Context, userID string, now time.Time) (*billing.UserPlan, error) {
	m, err := currentPlan(s.db.WithContext(ctx), userID, now)
	if err != nil {
		return nil, err
	}
	return m.toDomain(), nil
}

func currentPlan(db *gorm.DB, userID string, now time.Time) (*userPlanModel, error) {
	var m userPlanModel
	err := db.Where("user_id = ? AND cancelled_at IS NULL AND starts_at <= ? AND expires_at > ?", userID, now, now).
		Order("starts_at DESC, id DESC").Take(&m).Error
	if err != nil {
		return nil, pgdb.Translate(err, "user plan")
	}
	return &m, nil
}

// CreatePayment inserts a pending payment and counts its discount's use; apperr Conflict
// discount_exhausted when the discount has no use left.
func (s *Billing) CreatePayment(ctx context.Context, p *billing.Payment) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		if err := useDiscount(tx, p.DiscountID); err != nil {
			return err
		}
		m := toPaymentModel(p)
		return pgdb.Translate(tx.Create(&m).Error, "payment")
	})
}

// useDiscount counts one use of the discount, only while uses are left.
func useDiscount(tx *gorm.DB, discountID *string) error {
	if discountID == nil {
		return nil
	}
	res := tx.Exec(`UPDATE discounts SET use_count = use_count + 1
		WHERE id = ? AND (max_use_count IS NULL OR use_count < max_use_count)`, *discountID)
	if res.Error != nil {
		return pgdb.Translate(res.Error, "discount")
	}
	if res.RowsAffected == 0 {
		return apperr.E(apperr.Conflict, "discount_exhausted", "the discount code has no use left")
	}
	return nil
}

// SetAuthority records the gateway's id of the payment's checkout.
func (s *Billing) SetAuthority(ctx context.Context, paymentID, authority string) error {
	err := s.db.WithContext(ctx).Model(&paymentModel{}).Where("id = ?", paymentID).Update("authority", authority).Error
	return pgdb.Translate(err, "payment")
}

// PayFromBalance counts the discount's use, debits the balance only when it covers the amount
// (apperr Conflict insufficient_balance otherwise), inserts the confirmed payment and activates
// up, with the payment.confirmed and plan.activated events, in one transaction.
func (s *Billing) PayFromBalance(ctx context.Context, p *billing.Payment, up *billing.UserPlan) error {
	defer s.changes.UserChanged(p.UserID)
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		if err := changeBalance(tx, p.UserID, -p.AmountMinor); err != nil {
			return err
		}
		if err := useDiscount(tx, p.DiscountID); err != nil {
			return err
		}
		m := toPaymentModel(p)
		if err := tx.Create(&m).Error; err != nil {
			return pgdb.Translate(err, "payment")
		}
		return s.activate(ctx, tx, p, up, *p.ConfirmedAt)
	})
}

// activate cancels the plans billing says up supersedes (UserPlan.SupersededBy), inserts up and
// writes the payment.confirmed and plan.activated events.
func (s *Billing) activate(ctx context.Context, tx *gorm.DB, p *billing.Payment, up *billing.UserPlan, at time.Time) error {
	var held []userPlanModel
	if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("user_id = ? AND cancelled_at IS NULL", up.UserID).
		Find(&held).Error; err != nil {
		return pgdb.Translate(err, "user plan")
	}
	for _, h := range held {
		plan := billing.UserPlan(h)
		if !plan.SupersededBy(at) {
			continue
		}
		if err := tx.Model(&userPlanModel{}).Where("id = ?", h.ID).Update("cancelled_at", at).Error; err != nil {
			return pgdb.Translate(err, "user plan")
		}
	}
	m := userPlanModel(*up)
	if err := tx.Create(&m).Error; err != nil {
		return pgdb.Translate(err, "user plan")
	}
	confirmed := &identityv1.PaymentConfirmed{
		PaymentId: p.ID, TenantId: p.TenantID, UserId: p.UserID, Gateway: p.Gateway, Action: p.Action,
		AmountMinor: p.AmountMinor, Currency: p.Currency, PlanId: up.PlanID, DiscountCode: p.DiscountCode,
		DiscountMinor: p.DiscountMinor, ConfirmedAt: timestamppb.New(at),
	}
	if _, err := s.outbox.Add(ctx, tx, events.SubjectPaymentConfirmed, events.SubjectPaymentConfirmed, confirmed); err != nil {
		return err
	}
	activated := &identityv1.PlanActivated{
		UserPlanId: up.ID, TenantId: up.TenantID, UserId: up.UserID, PlanId: up.PlanID, PlanCode: up.PlanCode,
		PaymentId: p.ID, StartsAt: timestamppb.New(up.StartsAt), ExpiresAt: timestamppb.New(up.ExpiresAt),
		AutoRenew: up.AutoRenew, ActivatedAt: timestamppb.New(at),
	}
	_, err := s.outbox.Add(ctx, tx, events.SubjectPlanActivated, events.SubjectPlanActivated, activated)
	return err
}

// PaymentByAuthority finds the payment of a gateway checkout; apperr NotFound otherwise.
func (s *Billing) PaymentByAuthority(ctx context.Context, authority string) (*billing.Payment, error) {
	var m paymentModel
	if err := s.db.WithContext(ctx).Where("authority = ?", authority).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "payment")
	}
	return m.toDomain(), nil
}

// Payment finds one of the user's payments; apperr NotFound otherwise.
func (s *Billing) Payment(ctx context.Context, userID, paymentID string) (*billing.Payment, error) {
	var m paymentModel
	if err := s.db.WithContext(ctx).Where("user_id = ? AND id = ?", userID, paymentID).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "payment")
	}
	return m.toDomain(), nil
}

// Payments answers a page of the user's payments, newest first, and their total.
func (s *Billing) Payments(ctx context.Context, userID string, page, size int) ([]billing.Payment, int64, error) {
	q := func() *gorm.DB { return s.db.WithContext(ctx).Model(&paymentModel{}).Where("user_id = ?", userID) }
	var total int64
	if err := q().Count(&total).Error; err != nil {
		return nil, 0, pgdb.Translate(err, "payments")
	}
	var ms []paymentModel
	if err := q().Order("created_at DESC, id DESC").Offset((page - 1) * size).Limit(size).Find(&ms).Error; err != nil {
		return nil, 0, pgdb.Translate(err, "payments")
	}
	out := make([]billing.Payment, len(ms))
	for i, m := range ms {
		out[i] = *m.toDomain()
	}
	return out, total, nil
}

// Confirm moves a pending payment to Confirmed (a conditional update, so that of two
// concurrent or replayed callbacks only one wins) and activates up in the same transaction.
func (s *Billing) Confirm(ctx context.Context, paymentID string, o billing.Outcome, up *billing.UserPlan, at time.Time) (bool, error) {
	won := false
	err := pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		var ms []paymentModel
		err := tx.Model(&ms).Clauses(clause.Returning{}).Where("id = ? AND status = ?", paymentID, billing.StatusPending).
			Updates(map[string]any{"status": billing.StatusConfirmed, "confirmed_at": at, "gateway_ref": o.Ref, "card_last4": o.CardLast4}).Error
		if err != nil {
			return pgdb.Translate(err, "payment")
		}
		if len(ms) == 0 {
			return nil
		}
		won = true
		return s.activate(ctx, tx, ms[0].toDomain(), up, at)
	})
	return won, err
}

// Fail moves a pending payment to Failed, gives back its discount use and writes the
// payment.failed event, in one transaction.
func (s *Billing) Fail(ctx context.Context, paymentID, reason string, at time.Time) (bool, error) {
	won := false
	err := pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		var ms []paymentModel
		err := tx.Model(&ms).Clauses(clause.Returning{}).Where("id = ? AND status = ?", paymentID, billing.StatusPending).
			Updates(map[string]any{"status": billing.StatusFailed, "failed_at": at, "failure_reason": reason}).Error
		if err != nil {
			return pgdb.Translate(err, "payment")
		}
		if len(ms) == 0 {
			return nil
		}
		won = true
		p := ms[0]
		if p.DiscountID != nil {
			if err := tx.Exec("UPDATE discounts SET use_count = use_count - 1 WHERE id = ? AND use_count > 0", *p.DiscountID).Error; err != nil {
				return pgdb.Translate(err, "discount")
			}
		}
		_, err = s.outbox.Add(ctx, tx, events.SubjectPaymentFailed, events.SubjectPaymentFailed, &identityv1.PaymentFailed{
			PaymentId: p.ID, TenantId: p.TenantID, UserId: p.UserID, Gateway: p.Gateway, Action: p.Action,
			AmountMinor: p.AmountMinor, Currency: p.Currency, FailureReason: reason, FailedAt: timestamppb.New(at),
		})
		return err
	})
	return won, err
}

// Refund locks the payment, lets decide build the refund, and records it with its effect (a
// balance credit, or plan time) and the payment.refunded event in one transaction. It returns
// apperr NotFound for an unknown payment, decide's error, and Conflict when a Plan refund finds
// no plan to extend.
func (s *Billing) Refund(ctx context.Context, paymentID string, decide func(p *billing.Payment) (*billing.Refund, error)) (*billing.Refund, error) {
	var r *billing.Refund
	var userID string
	err := pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		var m paymentModel
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", paymentID).Take(&m).Error; err != nil {
			return pgdb.Translate(err, "payment")
		}
		p := m.toDomain()
		userID = p.UserID
		var err error
		if r, err = decide(p); err != nil {
			return err
		}
		if err := s.refundEffect(tx, p, r); err != nil {
			return err
		}
		status := billing.StatusPartiallyRefunded
		if p.RefundedMinor+r.AmountMinor == p.AmountMinor {
			status = billing.StatusRefunded
		}
		if err := tx.Model(&paymentModel{}).Where("id = ?", p.ID).Updates(map[string]any{
			"refunded_minor": gorm.Expr("refunded_minor + ?", r.AmountMinor), "status": status,
		}).Error; err != nil {
			return pgdb.Translate(err, "payment")
		}
		rm := refundModel(*r)
		if err := tx.Create(&rm).Error; err != nil {
			return pgdb.Translate(err, "refund")
		}
		_, err = s.outbox.Add(ctx, tx, events.SubjectPaymentRefunded, events.SubjectPaymentRefunded, &identityv1.PaymentRefunded{
			RefundId: r.ID, PaymentId: p.ID, TenantId: p.TenantID, UserId: p.UserID, AmountMinor: r.AmountMinor,
			Currency: r.Currency, RefundTo: r.RefundTo, Reason: r.Reason, RefundedAt: timestamppb.New(r.CreatedAt),
		})
		return err
	})
	if userID != "" {
		s.changes.UserChanged(userID)
	}
	return r, err
}

// refundEffect persists the refund's effect as billing decides it: a balance credit, or the
// user's current plan extended by the refund's plan time.
func (s *Billing) refundEffect(tx *gorm.DB, p *billing.Payment, r *billing.Refund) error {
	switch {
	case r.CreditsBalance(p):
		return changeBalance(tx, p.UserID, r.AmountMinor)
	case r.RefundTo == billing.RefundToPlan:
		var bought userPlanModel
		if err := tx.Where("payment_id = ?", p.ID).Take(&bought).Error; err != nil {
			return apperr.E(apperr.Conflict, "no_plan", "the payment bought no plan to refund as plan time")
		}
		current, err := currentPlan(tx, p.UserID, r.CreatedAt)
		if err != nil {
			return apperr.E(apperr.Conflict, "no_plan", "the user has no current plan to extend")
		}
		extra := r.PlanTime(p, bought.ExpiresAt.Sub(bought.StartsAt))
		err = tx.Model(&userPlanModel{}).Where("id = ?", current.ID).Update("expires_at", current.ExpiresAt.Add(extra)).Error
		return pgdb.Translate(err, "user plan")
	}
	return nil
}

// DiscountByCode finds a discount of the tenant by its normalized code; apperr NotFound
// otherwise.
func (s *Billing) DiscountByCode(ctx context.Context, tenantID, code string) (*billing.Discount, error) {
	var m discountModel
	if err := s.db.WithContext(ctx).Where("tenant_id = ? AND code = ?", tenantID, code).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "discount")
	}
	d := m.toDomain()
	return &d, nil
}

// CreateDiscount inserts d; apperr Conflict discount_code_taken when the tenant has the code.
func (s *Billing) CreateDiscount(ctx context.Context, d *billing.Discount) error {
	m := toDiscountModel(d)
	err := s.db.WithContext(ctx).Create(&m).Error
	if pgdb.IsUniqueViolation(err, "discounts_tenant_code_key") {
		return apperr.E(apperr.Conflict, "discount_code_taken", "the tenant already has this discount code")
	}
	return pgdb.Translate(err, "discount")
}

// Discounts answers a page of the tenant's discounts, newest first, and their total.
func (s *Billing) Discounts(ctx context.Context, tenantID string, page, size int) ([]billing.Discount, int64, error) {
	q := func() *gorm.DB { return s.db.WithContext(ctx).Model(&discountModel{}).Where("tenant_id = ?", tenantID) }
	var total int64
	if err := q().Count(&total).Error; err != nil {
		return nil, 0, pgdb.Translate(err, "discounts")
	}
	var ms []discountModel
	if err := q().Order("created_at DESC, id DESC").Offset((page - 1) * size).Limit(size).Find(&ms).Error; err != nil {
		return nil, 0, pgdb.Translate(err, "discounts")
	}
	out := make([]billing.Discount, len(ms))
	for i, m := range ms {
		out[i] = m.toDomain()
	}
	return out, total, nil
}
