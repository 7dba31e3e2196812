// Package catalog is the operators' path to what a tenant offers its users: plans, quests and
// the gifts quests award are created and retired here (ADR 0147) instead of with SQL. Retiring
// hides an offer from new users and keeps what users already hold: a retired plan stays with
// the users who bought it, a retired quest's progress and claims stay, and a gift can be
// retired only once no active quest awards it. Methods return apperr kinds: Invalid (naming
// the field), NotFound and Conflict.
package catalog

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/check"
)

// Plan is a new plan of a tenant.
type Plan struct {
	TenantID, Code, Name, Description string
	// Scope is User or Tenant; BillingPeriod Monthly, Quarterly or Yearly.
	Scope, Currency, BillingPeriod string
	PriceMinor                     int64
	SecondsCharge, StorageGB       int
	ParallelRenders                int
}

// Gift is a new gift quests of its tenant may award.
type Gift struct {
	TenantID, Name, Description string
	// PrizeType is Balance, DailyRenders or RenderSeconds.
	PrizeType, Unit string
	Value           int64
	// ValidFor is how long an earned gift may be used; zero is forever.
	ValidFor time.Duration
}

// Quest is a new quest of a tenant.
type Quest struct {
	TenantID, Title, Challenge string
	// QuestType is OneTime, Daily, Weekly, Onboarding or Milestone.
	QuestType string
	// Trigger is the webhook name of the event that counts, one of the Service's triggers.
	Trigger     string
	TargetCount int
	// PrizeType is Balance (PrizeAmount minor units) or Gift (GiftID).
	PrizeType   string
	PrizeAmount int64
	GiftID      string
}

// Store persists offers. CreatePlan returns apperr Conflict for a code the tenant already
// uses; CreateQuest NotFound for a gift that is not the tenant's or is retired; the Retire
// methods NotFound for an unknown or already retired offer, and RetireGift Conflict while an
// active quest awards the gift.
type Store interface {
	CreatePlan(ctx context.Context, id string, p Plan) error
	RetirePlan(ctx context.Context, tenantID, code string) error
	CreateGift(ctx context.Context, id string, g Gift) error
	RetireGift(ctx context.Context, tenantID, id string, at time.Time) error
	CreateQuest(ctx context.Context, id string, q Quest) error
	RetireQuest(ctx context.Context, tenantID, id string) error
}

// Service validates and stores offers.
type Service struct {
	store    Store
	triggers []string
	now      func() time.Time
	newID    func() string
}

// NewService returns a Service whose quests may count the events named by triggers.
func NewService(store Store, triggers []string, now func() time.Time, newID func() string) *Service {
	return &Service{store: store, triggers: triggers, now: now, newID: newID}
}

var (
	codePattern     = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
)

func text(s string, max int) bool { return s != "" && utf8.RuneCountInString(s) <= max }

// CreatePlan validates and stores a plan and answers its id.
func (s *Service) CreatePlan(ctx context.Context, p Plan) (string, error) {
	p.Code, p.Name = strings.TrimSpace(p.Code), strings.TrimSpace(p.Name)
	var c check.Checker
	c.AddIf(!codePattern.MatchString(p.Code), "code", "must be 1-64 lower-case letters, digits, - or _")
	c.AddIf(!text(p.Name, 200), "name", "is required and at most 200 characters")
	c.AddIf(utf8.RuneCountInString(p.Description) > 2000, "description", "must be at most 2000 characters")
	c.AddIf(!(p.Scope == "User" || p.Scope == "Tenant"), "scope", "must be User or Tenant")
	c.AddIf(!currencyPattern.MatchString(p.Currency), "currency", "must be a three-letter ISO 4217 code such as EUR")
	c.AddIf(!slices.Contains([]string{"Monthly", "Quarterly", "Yearly"}, p.BillingPeriod), "billing_period", "must be Monthly, Quarterly or Yearly")
	c.AddIf(p.PriceMinor < 0, "price_minor", "must not be negative")
	c.AddIf(p.SecondsCharge < 0 || p.StorageGB < 0, "seconds_charge", "seconds_charge and storage_gb must not be negative")
	c.AddIf(p.ParallelRenders < 1, "parallel_renders", "must be at least 1")
	if err := c.Reject("validation_failed", "the plan is invalid"); err != nil {
		return "", err
	}
	id := s.newID()
	return id, s.store.CreatePlan(ctx, id, p)
}

// RetirePlan stops offering the tenant's plan with code; its buyers keep it.
func (s *Service) RetirePlan(ctx context.Context, tenantID, code string) error {
	return s.store.RetirePlan(ctx, tenantID, strings.TrimSpace(code))
}

// CreateGift validates and stores a gift and answers its id.
func (s *Service) CreateGift(ctx context.Context, g Gift) (string, error) {
	g.Name = strings.TrimSpace(g.Name)
	var c check.Checker
	c.AddIf(!text(g.Name, 200), "name", "is required and at most 200 characters")
	c.AddIf(utf8.RuneCountInString(g.Description) > 2000, "description", "must be at most 2000 characters")
	c.AddIf(!slices.Contains([]string{"Balance", "DailyRenders", "RenderSeconds"}, g.PrizeType), "prize_type", "must be Balance, DailyRenders or RenderSeconds")
	c.AddIf(utf8.RuneCountInString(g.Unit) > 32, "unit", "must be at most 32 characters")
	c.AddIf(g.Value <= 0, "value", "must be positive")
	c.AddIf(g.ValidFor < 0, "valid_for", "must not be negative")
	if err := c.Reject("validation_failed", "the gift is invalid"); err != nil {
		return "", err
	}
	id := s.newID()
	return id, s.store.CreateGift(ctx, id, g)
}

// RetireGift stops the gift from being awarded by new quests; earned ones stay usable.
func (s *Service) RetireGift(ctx context.Context, tenantID, id string) error {
	return s.store.RetireGift(ctx, tenantID, id, s.now())
}

// CreateQuest validates and stores a quest and answers its id.
func (s *Service) CreateQuest(ctx context.Context, q Quest) (string, error) {
	q.Title = strings.TrimSpace(q.Title)
	var c check.Checker
	c.AddIf(!text(q.Title, 200), "title", "is required and at most 200 characters")
	c.AddIf(utf8.RuneCountInString(q.Challenge) > 2000, "challenge", "must be at most 2000 characters")
	c.AddIf(!slices.Contains([]string{"OneTime", "Daily", "Weekly", "Onboarding", "Milestone"}, q.QuestType), "quest_type", "must be OneTime, Daily, Weekly, Onboarding or Milestone")
	c.AddIf(!slices.Contains(s.triggers, q.Trigger), "trigger", "must be one of "+strings.Join(s.triggers, ", "))
	c.AddIf(q.TargetCount <= 0, "target_count", "must be positive")
	switch q.PrizeType {
	case "Balance":
		c.AddIf(!(q.PrizeAmount > 0 && q.GiftID == ""), "prize_amount", "a Balance prize needs a positive prize_amount and no gift")
	case "Gift":
		c.AddIf(!(q.GiftID != "" && q.PrizeAmount == 0), "gift_id", "a Gift prize needs a gift and no prize_amount")
	default:
		c.Add("prize_type", "must be Balance or Gift")
	}
	if err := c.Reject("validation_failed", "the quest is invalid"); err != nil {
		return "", err
	}
	id := s.newID()
	return id, s.store.CreateQuest(ctx, id, q)
}

// RetireQuest stops offering the quest; progress and claims already made stay.
func (s *Service) RetireQuest(ctx context.Context, tenantID, id string) error {
	return s.store.RetireQuest(ctx, tenantID, id)
}
