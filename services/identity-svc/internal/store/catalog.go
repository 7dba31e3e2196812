package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/identity-svc/internal/catalog"
)

// Catalog implements catalog.Store on the plans, gifts and quests tables.
type Catalog struct{ db *gorm.DB }

// NewCatalog returns a Catalog.
func NewCatalog(db *gorm.DB) *Catalog { return &Catalog{db: db} }

// CreatePlan inserts an active plan; apperr Conflict when the tenant already has its code.
func (s *Catalog) CreatePlan(ctx context.Context, id string, p catalog.Plan) error {
	return pgdb.Translate(s.db.WithContext(ctx).Exec(`INSERT INTO plans (id, tenant_id, code, name, description, scope,
		currency, billing_period, price_minor, seconds_charge, storage_gb, parallel_renders)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, p.TenantID, p.Code, p.Name, p.Description, p.Scope,
		p.Currency, p.BillingPeriod, p.PriceMinor, p.SecondsCharge, p.StorageGB, p.ParallelRenders).Error, "plan")
}

// RetirePlan deactivates the tenant's active plan with code; apperr NotFound when there is none.
func (s *Catalog) RetirePlan(ctx context.Context, tenantID, code string) error {
	return retire(s.db.WithContext(ctx), "plan", "UPDATE plans SET is_active = false WHERE tenant_id = ? AND code = ? AND is_active", tenantID, code)
}

// CreateGift inserts a gift.
func (s *Catalog) CreateGift(ctx context.Context, id string, g catalog.Gift) error {
	var validFor *string
	if g.ValidFor > 0 {
		v := g.ValidFor.String()
		validFor = &v
	}
	return pgdb.Translate(s.db.WithContext(ctx).Exec(`INSERT INTO gifts (id, tenant_id, name, description, prize_type, unit, value, valid_for)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?::interval)`, id, g.TenantID, g.Name, g.Description, g.PrizeType, g.Unit, g.Value, validFor).Error, "gift")
}

// RetireGift marks the tenant's gift retired; apperr NotFound for an unknown or retired gift
// and Conflict while an active quest awards it.
func (s *Catalog) RetireGift(ctx context.Context, tenantID, id string, at time.Time) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var awarding int64
		if err := tx.Raw("SELECT count(*) FROM quests WHERE gift_id = ? AND is_active", id).Scan(&awarding).Error; err != nil {
			return pgdb.Translate(err, "gift")
		}
		if awarding > 0 {
			return apperr.E(apperr.Conflict, "gift_in_use", "the gift is the prize of an active quest; retire the quest first")
		}
		return retire(tx, "gift", "UPDATE gifts SET retired_at = ? WHERE tenant_id = ? AND id = ? AND retired_at IS NULL", at, tenantID, id)
	})
}

// CreateQuest inserts an active quest; apperr NotFound when its gift is not the tenant's or is
// retired.
func (s *Catalog) CreateQuest(ctx context.Context, id string, q catalog.Quest) error {
	var gift *string
	if q.GiftID != "" {
		var n int64
		if err := s.db.WithContext(ctx).Raw("SELECT count(*) FROM gifts WHERE id = ? AND tenant_id = ? AND retired_at IS NULL", q.GiftID, q.TenantID).
			Scan(&n).Error; err != nil {
			return pgdb.Translate(err, "gift")
		}
		if n == 0 {
			return apperr.E(apperr.NotFound, "not_found", "gift not found")
		}
		gift = &q.GiftID
	}
	return pgdb.Translate(s.db.WithContext(ctx).Exec(`INSERT INTO quests (id, tenant_id, title, challenge, quest_type, trigger,
		target_count, prize_type, prize_amount, gift_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, q.TenantID, q.Title, q.Challenge, q.QuestType, q.Trigger, q.TargetCount, q.PrizeType, q.PrizeAmount, gift).Error, "quest")
}

// RetireQuest deactivates the tenant's active quest; apperr NotFound when there is none.
func (s *Catalog) RetireQuest(ctx context.Context, tenantID, id string) error {
	return retire(s.db.WithContext(ctx), "quest", "UPDATE quests SET is_active = false WHERE tenant_id = ? AND id = ? AND is_active", tenantID, id)
}

// retire runs an update that deactivates one row on db, and answers apperr NotFound when it
// matched none.
func retire(db *gorm.DB, what, query string, args ...any) error {
	res := db.Exec(query, args...)
	if res.Error != nil {
		return pgdb.Translate(res.Error, what)
	}
	if res.RowsAffected == 0 {
		return apperr.E(apperr.NotFound, "not_found", what+" not found")
	}
	return nil
}
