package tenant

import (
	"context"
	"time"

	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// UsageDay is a tenant's usage and billing on one day.
type UsageDay struct {
	Date              time.Time
	RendersCompleted  int
	RenderSeconds     int64
	StorageBytes      int64
	APICalls          int64
	ActiveUsers       int
	AmountBilledMinor int64
	BillingCurrency   string
	BillingStatus     string
}

// UsageStore reads usage days.
type UsageStore interface {
	// Usage returns the recorded days of the tenant between from and to inclusive, oldest first.
	Usage(ctx context.Context, tenantID string, from, to time.Time) ([]UsageDay, error)
}

// Limits of usage queries.
const (
	DefaultUsageDays = 30
	MaxUsageDays     = 366
)

// Usage answers the tenant's usage between from and to (dates; zero means the last 30 days up
// to today). Tenant admins, platform admins and services may read it. It returns apperr
// NotFound or Forbidden as Update does (services may read any tenant) and Invalid for a
// reversed or too long range.
func (s *Service) Usage(ctx context.Context, a actor.Actor, tenantID string, from, to time.Time) ([]UsageDay, error) {
	if !a.Service {
		if err := s.authorizeManage(a, tenantID); err != nil {
			return nil, err
		}
	}
	if _, err := s.store.Get(ctx, tenantID); err != nil {
		return nil, err
	}
	if to.IsZero() {
		to = s.now().UTC().Truncate(24 * time.Hour)
	}
	if from.IsZero() {
		from = to.AddDate(0, 0, -(DefaultUsageDays - 1))
	}
	if from.After(to) {
		return nil, check.Field("validation_failed", "the date range is invalid", "from", "must not be after to")
	}
	if to.Sub(from) >= MaxUsageDays*24*time.Hour {
		return nil, check.Field("validation_failed", "the date range is too long", "to", "the range must be at most 366 days")
	}
	return s.store.Usage(ctx, tenantID, from, to)
}
