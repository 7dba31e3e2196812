package store

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
	"github.com/motionstudio/platform/services/identity-svc/internal/quest"
)

// Quests implements quest.Store. Built over a transaction (outbox.Once's), its writes join it.
type Quests struct {
	db      *gorm.DB
	outbox  *outbox.Writer
	changes AccountChanges
}

// NewQuests returns a Quests store writing its events through w and telling changes (nil: no
// one) of the users whose balance or daily renders a prize changes.
func NewQuests(db *gorm.DB, w *outbox.Writer, changes AccountChanges) *Quests {
	return &Quests{db: db, outbox: w, changes: heard(changes)}
}

// Once runs fn with a Quests store whose writes join the transaction that records eventID as
// seen by consumer (outbox.Once); an event seen before does not run fn again.
func (s *Quests) Once(ctx context.Context, consumer, eventID string, fn func(quest.Store) error) error {
	_, err := outbox.Once(ctx, s.db, consumer, eventID, func(tx *gorm.DB) error {
		return fn(&Quests{db: tx, outbox: s.outbox, changes: s.changes})
	})
	return err
}

type questModel struct {
	ID          string `gorm:"primaryKey"`
	TenantID    string
	Title       string
	Challenge   string
	Why         string
	Hint        string
	Icon        string
	QuestType   string
	Trigger     string
	TargetCount int
	PrizeType   string
	PrizeAmount int64
	GiftID      *string
	ExpiresAt   *time.Time
}

func (questModel) TableName() string { return "quests" }

func (m questModel) toDomain() quest.Quest {
	return quest.Quest{
		ID: m.ID, TenantID: m.TenantID, Title: m.Title, Challenge: m.Challenge, Why: m.Why, Hint: m.Hint,
		Icon: m.Icon, QuestType: m.QuestType, Trigger: m.Trigger, TargetCount: m.TargetCount,
		PrizeType: m.PrizeType, PrizeAmount: m.PrizeAmount, GiftID: m.GiftID, ExpiresAt: m.ExpiresAt,
	}
}

type progressModel struct {
	QuestID      string `gorm:"primaryKey"`
	UserID       string `gorm:"primaryKey"`
	PeriodKey    string `gorm:"primaryKey"`
	CurrentCount int
	CompletedAt  *time.Time
	ClaimedAt    *time.Time
	UpdatedAt    time.Time
}

func (progressModel) TableName() string { return "quest_progress" }

type earnedGiftRow struct {
	ID          string
	GiftID      string
	TenantID    string
	UserID      string
	Name        string
	Description string
	PrizeType   string
	Unit        string
	Value       int64
	EarnedAt    time.Time
	ExpiresAt   *time.Time
	UsedAt      *time.Time
}

func (r earnedGiftRow) toDomain() quest.EarnedGift { return quest.EarnedGift(r) }

const earnedGiftSelect = `SELECT e.id, e.gift_id, e.tenant_id, e.user_id, g.name, g.description, g.prize_type, g.unit,
	g.value, e.earned_at, e.expires_at, e.used_at FROM earned_gifts e JOIN gifts g ON g.id = e.gift_id `

func activeQuests(db *gorm.DB, tenantID string, at time.Time) *gorm.DB {
	return db.Where("tenant_id = ? AND is_active AND (expires_at IS NULL OR expires_at > ?)", tenantID, at)
}

// Quests lists the tenant's active quests with the user's progress in each one's period at now.
func (s *Quests) Quests(ctx context.Context, tenantID, userID string, now time.Time) ([]quest.Quest, error) {
	var ms []questModel
	if err := activeQuests(s.db.WithContext(ctx), tenantID, now).Order("sort_order, created_at, id").Find(&ms).Error; err != nil {
		return nil, pgdb.Translate(err, "quests")
	}
	var ps []progressModel
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Find(&ps).Error; err != nil {
		return nil, pgdb.Translate(err, "quest progress")
	}
	type key struct{ quest, period string }
	byKey := make(map[key]progressModel, len(ps))
	for _, p := range ps {
		byKey[key{p.QuestID, p.PeriodKey}] = p
	}
	out := make([]quest.Quest, len(ms))
	for i, m := range ms {
		out[i] = m.toDomain()
		if p, ok := byKey[key{m.ID, quest.Period(m.QuestType, now)}]; ok {
			out[i].CurrentCount, out[i].CompletedAt, out[i].ClaimedAt = p.CurrentCount, p.CompletedAt, p.ClaimedAt
		}
	}
	return out, nil
}

// Triggered lists the tenant's active quests moved by trigger at, among those that existed then.
func (s *Quests) Triggered(ctx context.Context, tenantID, trigger string, at time.Time) ([]quest.Quest, error) {
	var ms []questModel
	q := activeQuests(s.db.WithContext(ctx), tenantID, at).Where("trigger = ? AND created_at <= ?", trigger, at)
	if err := q.Find(&ms).Error; err != nil {
		return nil, pgdb.Translate(err, "quests")
	}
	out := make([]quest.Quest, len(ms))
	for i, m := range ms {
		out[i] = m.toDomain()
	}
	return out, nil
}

// Advance counts one step of the user on q in period, marking it completed (with the
// quest.completed event) when the step reaches the target. Steps after completion change
// nothing.
func (s *Quests) Advance(ctx context.Context, q *quest.Quest, userID, period string, at time.Time) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		seed := progressModel{QuestID: q.ID, UserID: userID, PeriodKey: period, UpdatedAt: at}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&seed).Error; err != nil {
			return pgdb.Translate(err, "quest progress")
		}
		var p progressModel
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).
			Where("quest_id = ? AND user_id = ? AND period_key = ?", q.ID, userID, period).Take(&p).Error
		if err != nil {
			return pgdb.Translate(err, "quest progress")
		}
		if p.CompletedAt != nil {
			return nil
		}
		update := map[string]any{"current_count": p.CurrentCount + 1, "updated_at": at}
		done := p.CurrentCount+1 >= q.TargetCount
		if done {
			update["completed_at"] = at
		}
		err = tx.Model(&progressModel{}).Where("quest_id = ? AND user_id = ? AND period_key = ?", q.ID, userID, period).
			Updates(update).Error
		if err != nil || !done {
			return pgdb.Translate(err, "quest progress")
		}
		_, err = s.outbox.Add(ctx, tx, events.SubjectQuestCompleted, events.SubjectQuestCompleted, &identityv1.QuestCompleted{
			QuestId: q.ID, TenantId: q.TenantID, UserId: userID, QuestType: q.QuestType, PrizeType: q.PrizeType,
			PrizeAmount: q.PrizeAmount, CompletedAt: timestamppb.New(at),
		})
		return err
	})
}

// Claim locks the user's progress on the tenant's quest in its period, lets decide check it,
// marks it claimed and grants the prize (a balance credit or an earned gift), in one
// transaction. It returns apperr NotFound for a quest that is not the tenant's and decide's
// error.
func (s *Quests) Claim(ctx context.Context, tenantID, userID, questID string, period func(q *quest.Quest) string,
	decide func(q *quest.Quest) error, c *quest.Claimed) error {
	defer s.changes.UserChanged(userID)
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		var m questModel
		if err := tx.Where("id = ? AND tenant_id = ?", questID, tenantID).Take(&m).Error; err != nil {
			return pgdb.Translate(err, "quest")
		}
		q := m.toDomain()
		key := period(&q)
		var p progressModel
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).
			Where("quest_id = ? AND user_id = ? AND period_key = ?", q.ID, userID, key).Take(&p).Error
		if err != nil && !apperr.Is(pgdb.Translate(err, "quest progress"), apperr.NotFound) {
			return pgdb.Translate(err, "quest progress")
		}
		q.CurrentCount, q.CompletedAt, q.ClaimedAt = p.CurrentCount, p.CompletedAt, p.ClaimedAt
		if err := decide(&q); err != nil {
			return err
		}
		err = tx.Model(&progressModel{}).Where("quest_id = ? AND user_id = ? AND period_key = ?", q.ID, userID, key).
			Update("claimed_at", c.ClaimedAt).Error
		if err != nil {
			return pgdb.Translate(err, "quest progress")
		}
		switch q.PrizeType {
		case quest.PrizeBalance:
			err = changeBalance(tx, userID, q.PrizeAmount)
		case quest.PrizeGift:
			err = tx.Exec(`INSERT INTO earned_gifts (id, gift_id, tenant_id, user_id, quest_id, earned_at, expires_at)
				SELECT ?, g.id, ?, ?, ?, ?, ?::timestamptz + g.valid_for FROM gifts g WHERE g.id = ?`,
				c.EarnedGiftID, tenantID, userID, q.ID, c.ClaimedAt, c.ClaimedAt, *q.GiftID).Error
		}
		return pgdb.Translate(err, "prize")
	})
}

// EarnedGifts lists the user's unused, unexpired gifts, newest first.
func (s *Quests) EarnedGifts(ctx context.Context, userID string, now time.Time) ([]quest.EarnedGift, error) {
	var rows []earnedGiftRow
	err := s.db.WithContext(ctx).Raw(earnedGiftSelect+
		"WHERE e.user_id = ? AND e.used_at IS NULL AND (e.expires_at IS NULL OR e.expires_at > ?) ORDER BY e.earned_at DESC, e.id DESC LIMIT 500",
		userID, now).Scan(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "earned gifts")
	}
	out := make([]quest.EarnedGift, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// UseGift locks the user's gift, lets decide check it, marks it used and applies it (a
// balance credit, daily renders, or render seconds on the current plan), in one transaction.
// It returns apperr NotFound for a gift that is not the user's, decide's error, and Conflict
// no_plan when render seconds find no current plan.
func (s *Quests) UseGift(ctx context.Context, userID, earnedGiftID string, decide func(g *quest.EarnedGift) error, at time.Time) (*quest.EarnedGift, error) {
	var g quest.EarnedGift
	defer s.changes.UserChanged(userID)
	err := pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		var rows []earnedGiftRow
		if err := tx.Raw(earnedGiftSelect+"WHERE e.id = ? AND e.user_id = ? FOR UPDATE OF e", earnedGiftID, userID).Scan(&rows).Error; err != nil {
			return pgdb.Translate(err, "earned gift")
		}
		if len(rows) == 0 {
			return apperr.E(apperr.NotFound, "not_found", "earned gift not found")
		}
		g = rows[0].toDomain()
		if err := decide(&g); err != nil {
			return err
		}
		g.UsedAt = &at
		if err := tx.Exec("UPDATE earned_gifts SET used_at = ? WHERE id = ?", at, g.ID).Error; err != nil {
			return pgdb.Translate(err, "earned gift")
		}
		return applyGift(tx, &g, at)
	})
	if err != nil {
		return nil, err
	}
	return &g, nil
}

func applyGift(tx *gorm.DB, g *quest.EarnedGift, at time.Time) error {
	switch g.PrizeType {
	case quest.PrizeBalance:
		return changeBalance(tx, g.UserID, g.Value)
	case quest.PrizeDailyRenders:
		return pgdb.Translate(tx.Exec("UPDATE users SET daily_remain_render_count = daily_remain_render_count + ?, updated_at = now() WHERE id = ?", g.Value, g.UserID).Error, "user")
	case quest.PrizeRenderSeconds:
		current, err := currentPlan(tx, g.UserID, at)
		if err != nil {
			return apperr.E(apperr.Conflict, "no_plan", "render seconds need a current plan")
		}
		return pgdb.Translate(tx.Exec("UPDATE user_plans SET remain_charge_sec = remain_charge_sec + ? WHERE id = ?", g.Value, current.ID).Error, "user plan")
	}
	return nil
}
