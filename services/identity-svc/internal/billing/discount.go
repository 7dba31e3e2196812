package billing

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/check"
)

// Discount kinds.
const (
	KindPercentage    = "Percentage"
	KindFixedAmount   = "FixedAmount"
	KindFreeMonths    = "FreeMonths"
	KindRenderCredits = "RenderCredits"
)

// Reasons a discount code does not apply.
const (
	ReasonNotFound      = "not_found"
	ReasonNotStarted    = "not_started"
	ReasonExpired       = "expired"
	ReasonExhausted     = "exhausted"
	ReasonNotApplicable = "not_applicable"
)

// Discount is a code that lowers a plan's price or adds to what it gives.
type Discount struct {
	ID                    string
	TenantID              string
	Name                  string
	Code                  string
	Kind                  string
	Value                 float64
	OwnerUserID           *string
	OwnerProfitPercentage *float64
	MaxUseCount           *int
	UseCount              int
	AppliesToPlanIDs      []string
	StartsAt              *time.Time
	ExpiresAt             *time.Time
	CreatedBy             string
	CreatedAt             time.Time
}

// NormalizeCode is the stored, case-insensitive form of a discount code.
func NormalizeCode(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// Refusal answers why d does not apply at now to planID (any plan when planID is empty), or ""
// when it does. The use count is checked again, atomically, when a purchase counts the use.
func (d *Discount) Refusal(now time.Time, planID string) string {
	switch {
	case d.StartsAt != nil && now.Before(*d.StartsAt):
		return ReasonNotStarted
	case d.ExpiresAt != nil && !now.Before(*d.ExpiresAt):
		return ReasonExpired
	case d.MaxUseCount != nil && d.UseCount >= *d.MaxUseCount:
		return ReasonExhausted
	case planID != "" && len(d.AppliesToPlanIDs) > 0 && !slices.Contains(d.AppliesToPlanIDs, planID):
		return ReasonNotApplicable
	}
	return ""
}

// Apply computes what d gives on plan, in minor units: the price reduction (never above the
// price) and the render seconds a RenderCredits code adds. Percentage takes value percent of
// the price, rounded down to a minor unit; FixedAmount takes value minor units; FreeMonths takes
// value months' worth of the plan's per-month price (price / months in its period, rounded
// down); RenderCredits reduces nothing and adds value render seconds.
func (d *Discount) Apply(plan *Plan) (discountMinor int64, bonusSeconds int) {
	price := plan.PriceMinor
	switch d.Kind {
	case KindPercentage:
		bp := int64(math.Round(d.Value * 100))
		discountMinor = price/10000*bp + price%10000*bp/10000
	case KindFixedAmount:
		discountMinor = int64(d.Value)
	case KindFreeMonths:
		discountMinor = price / int64(plan.Months()) * int64(d.Value)
	case KindRenderCredits:
		bonusSeconds = int(d.Value)
	}
	return min(max(discountMinor, 0), price), bonusSeconds
}

// Validate checks a new discount: name, code (letters, digits, - and _, up to 64), a known kind
// and a value that fits it (Percentage above 0 and at most 100, the others whole numbers of at
// least 1), percentages of profit between 0 and 100, a positive use limit and a start before
// the end. It returns apperr Invalid naming every bad field.
func (d *Discount) Validate() error {
	var c check.Checker
	if n := strings.TrimSpace(d.Name); n == "" || len(n) > 200 {
		c.Add("name", "must be 1 to 200 characters")
	}
	c.AddIf(!validCode(d.Code), "code", "must be 1 to 64 letters, digits, - or _")
	switch d.Kind {
	case KindPercentage:
		c.AddIf(d.Value <= 0 || d.Value > 100, "value", "a percentage must be above 0 and at most 100")
	case KindFixedAmount, KindFreeMonths, KindRenderCredits:
		c.AddIf(d.Value < 1 || d.Value != math.Trunc(d.Value) || d.Value > 1e15, "value", "must be a whole number of at least 1")
	default:
		c.Add("kind", "must be Percentage, FixedAmount, FreeMonths or RenderCredits")
	}
	if p := d.OwnerProfitPercentage; p != nil && (*p < 0 || *p > 100) {
		c.Add("owner_profit_percentage", "must be between 0 and 100")
	}
	c.AddIf(d.MaxUseCount != nil && *d.MaxUseCount < 1, "max_use_count", "must be at least 1")
	c.AddIf(d.StartsAt != nil && d.ExpiresAt != nil && !d.StartsAt.Before(*d.ExpiresAt), "expires_at", "must be after starts_at")
	c.AddIf(len(d.AppliesToPlanIDs) > 100, "applies_to_plan_ids", "at most 100 plans")
	return c.Reject("invalid_discount", "the discount is invalid")
}

func validCode(code string) bool {
	if code == "" || len(code) > 64 {
		return false
	}
	for _, r := range code {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
