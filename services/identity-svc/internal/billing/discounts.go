package billing

import (
	"context"
	"strings"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// CreateDiscount creates a discount code in the actor's tenant; only its administrators may.
// It returns apperr Forbidden for other callers, Invalid for a bad discount (or a plan that is
// not the tenant's) and Conflict when the code is taken.
func (s *Service) CreateDiscount(ctx context.Context, a actor.Actor, d *Discount) error {
	if !a.IsAdmin() || a.UserID == "" {
		return apperr.E(apperr.Forbidden, "forbidden", "only administrators create discounts")
	}
	d.Code = NormalizeCode(d.Code)
	if err := d.Validate(); err != nil {
		return err
	}
	for _, id := range d.AppliesToPlanIDs {
		if _, err := s.store.Plan(ctx, a.TenantID, id); err != nil {
			return check.Field("invalid_discount", "a plan it applies to does not exist", "applies_to_plan_ids", "unknown plan "+id)
		}
	}
	d.ID, d.TenantID, d.UseCount, d.CreatedBy, d.CreatedAt = s.o.NewID(), a.TenantID, 0, a.UserID, s.o.Now()
	return s.store.CreateDiscount(ctx, d)
}

// Discounts lists the discount codes of the actor's tenant, newest first; apperr Forbidden for
// callers who are not its administrators. The page is validated by the caller.
func (s *Service) Discounts(ctx context.Context, a actor.Actor, p paging.Page) ([]Discount, int64, error) {
	if !a.IsAdmin() || a.UserID == "" {
		return nil, 0, apperr.E(apperr.Forbidden, "forbidden", "only administrators list discounts")
	}
	return s.store.Discounts(ctx, a.TenantID, p.Number, p.Size)
}

// Validation is what a discount code would give.
type Validation struct {
	Valid         bool
	Reason        string
	DiscountMinor int64
	BonusSeconds  int
	Kind          string
	Value         float64
}

// ValidateDiscount answers whether code applies now in the actor's tenant, to planID when
// given, and what it takes off that plan's price. Without a plan, only a FixedAmount code has a
// known reduction. It returns apperr Invalid without a code and NotFound when planID is not an active plan of
// the tenant.
func (s *Service) ValidateDiscount(ctx context.Context, a actor.Actor, code, planID string) (Validation, error) {
	if c := strings.TrimSpace(code); c == "" || len(c) > 64 {
		return Validation{}, check.Field("invalid_code", "a code of 1 to 64 characters is required", "code", "must be 1 to 64 characters")
	}
	var plan *Plan
	if planID != "" {
		var err error
		if plan, err = s.store.Plan(ctx, a.TenantID, planID); err != nil {
			return Validation{}, err
		}
	}
	d, err := s.store.DiscountByCode(ctx, a.TenantID, NormalizeCode(code))
	if apperr.Is(err, apperr.NotFound) {
		return Validation{Reason: ReasonNotFound}, nil
	}
	if err != nil {
		return Validation{}, err
	}
	v := Validation{Kind: d.Kind, Value: d.Value, Reason: d.Refusal(s.o.Now(), planID)}
	if v.Reason != "" {
		return v, nil
	}
	v.Valid = true
	switch {
	case plan != nil:
		v.DiscountMinor, v.BonusSeconds = d.Apply(plan)
	case d.Kind == KindFixedAmount:
		v.DiscountMinor = int64(d.Value)
	case d.Kind == KindRenderCredits:
		v.BonusSeconds = int(d.Value)
	}
	return v, nil
}
