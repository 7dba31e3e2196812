// Package quest runs gamification: quests that users' activity (identity events) moves towards
// a target, prizes claimed once per completed quest, and earned gifts used once. Its methods
// return *apperr.Error kinds: Invalid, NotFound and Conflict.
package quest

import (
	"context"
	"fmt"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// Quest types. Daily and Weekly quests start over each UTC day or ISO week; the others count
// once.
const (
	TypeOneTime    = "OneTime"
	TypeDaily      = "Daily"
	TypeWeekly     = "Weekly"
	TypeOnboarding = "Onboarding"
	TypeMilestone  = "Milestone"
)

// Prize types of quests and gifts.
const (
	// PrizeBalance credits prize_amount (gift value) minor units to the user's balance.
	PrizeBalance = "Balance"
	// PrizeGift earns the quest's gift.
	PrizeGift = "Gift"
	// PrizeDailyRenders adds renders to the user's daily allowance (gifts only).
	PrizeDailyRenders = "DailyRenders"
	// PrizeRenderSeconds adds render seconds to the user's current plan (gifts only).
	PrizeRenderSeconds = "RenderSeconds"
)

// Quest is a challenge of a tenant, with one user's progress.
type Quest struct {
	ID        string
	TenantID  string
	Title     string
	Challenge string
	Why       string
	Hint      string
	Icon      string
	QuestType string
	// Trigger is the webhook name of the identity event that moves the quest, e.g.
	// "user.registered".
	Trigger     string
	TargetCount int
	PrizeType   string
	PrizeAmount int64
	GiftID      *string
	ExpiresAt   *time.Time

	CurrentCount int
	CompletedAt  *time.Time
	ClaimedAt    *time.Time
}

// Period is the key of the quest's current round at t: the UTC date for Daily quests, the ISO
// week for Weekly ones, and empty for quests that count once.
func Period(questType string, t time.Time) string {
	t = t.UTC()
	switch questType {
	case TypeDaily:
		return t.Format("2006-01-02")
	case TypeWeekly:
		y, w := t.ISOWeek()
		return fmt.Sprintf("%d-W%02d", y, w)
	default:
		return ""
	}
}

// EarnedGift is a gift a user holds.
type EarnedGift struct {
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

// Claimed is a claimed prize.
type Claimed struct {
	QuestID      string
	PrizeType    string
	PrizeAmount  int64
	EarnedGiftID string
	ClaimedAt    time.Time
}

// Step is one counted activity of a user.
type Step struct {
	TenantID string
	UserID   string
	Trigger  string
	At       time.Time
}

// Store is what the quest service needs of persistence.
type Store interface {
	// Quests lists the tenant's active, unexpired quests at now with the user's progress in
	// each quest's current period.
	Quests(ctx context.Context, tenantID, userID string, now time.Time) ([]Quest, error)
	// Triggered lists the tenant's active, unexpired quests moved by trigger that existed at
	// at: an event handled late never counts for a quest created after it happened.
	Triggered(ctx context.Context, tenantID, trigger string, at time.Time) ([]Quest, error)
	// Advance counts one step of the user on the quest in period; when it reaches the target it
	// marks the quest completed and writes the quest.completed event.
	Advance(ctx context.Context, q *Quest, userID, period string, at time.Time) error
	// Claim, in one transaction, locks the user's progress on the quest in period, lets decide
	// check it, marks it claimed and grants the prize. NotFound when the quest is not the
	// tenant's.
	Claim(ctx context.Context, tenantID, userID, questID string, period func(q *Quest) string, decide func(q *Quest) error, c *Claimed) error
	// EarnedGifts lists the user's unused, unexpired gifts.
	EarnedGifts(ctx context.Context, userID string, now time.Time) ([]EarnedGift, error)
	// UseGift, in one transaction, locks the user's gift, lets decide check it, marks it used
	// and applies it; NotFound when it is not the user's.
	UseGift(ctx context.Context, userID, earnedGiftID string, decide func(g *EarnedGift) error, at time.Time) (*EarnedGift, error)
	// Once runs fn with a Store whose writes join the transaction that records eventID as seen
	// by consumer; an event seen before does not run fn again.
	Once(ctx context.Context, consumer, eventID string, fn func(Store) error) error
}

// Service runs quests and gifts.
type Service struct {
	store Store
	now   func() time.Time
	newID func() string
}

// NewService returns a Service.
func NewService(store Store, now func() time.Time, newID func() string) *Service {
	return &Service{store: store, now: now, newID: newID}
}

// Quests lists the actor's tenant's quests with the actor's progress.
func (s *Service) Quests(ctx context.Context, a actor.Actor) ([]Quest, error) {
	return s.store.Quests(ctx, a.TenantID, a.UserID, s.now())
}

// RecordOnce counts a step on every quest its trigger moves, once per consumer and event id
// however often the event is delivered.
func (s *Service) RecordOnce(ctx context.Context, consumer, eventID string, st Step) error {
	return s.store.Once(ctx, consumer, eventID, func(tx Store) error {
		qs, err := tx.Triggered(ctx, st.TenantID, st.Trigger, st.At)
		if err != nil {
			return err
		}
		for i := range qs {
			if err := tx.Advance(ctx, &qs[i], st.UserID, Period(qs[i].QuestType, st.At), st.At); err != nil {
				return err
			}
		}
		return nil
	})
}

// Claim grants the prize of a completed quest of the current period, once. It returns apperr
// NotFound for a quest that is not the actor's tenant's, and Conflict when the quest is not
// completed (quest_not_completed) or its prize was claimed (prize_claimed).
func (s *Service) Claim(ctx context.Context, a actor.Actor, questID string) (*Claimed, error) {
	now := s.now()
	c := &Claimed{QuestID: questID, ClaimedAt: now}
	err := s.store.Claim(ctx, a.TenantID, a.UserID, questID,
		func(q *Quest) string { return Period(q.QuestType, now) },
		func(q *Quest) error {
			switch {
			case q.ClaimedAt != nil:
				return apperr.E(apperr.Conflict, "prize_claimed", "the quest's prize was already claimed")
			case q.CompletedAt == nil:
				return apperr.E(apperr.Conflict, "quest_not_completed", "the quest is not completed")
			}
			c.PrizeType, c.PrizeAmount = q.PrizeType, q.PrizeAmount
			if q.PrizeType == PrizeGift {
				c.EarnedGiftID = s.newID()
			}
			return nil
		}, c)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// EarnedGifts lists the actor's unused gifts.
func (s *Service) EarnedGifts(ctx context.Context, a actor.Actor) ([]EarnedGift, error) {
	return s.store.EarnedGifts(ctx, a.UserID, s.now())
}

// UseGift uses one of the actor's gifts, once. It returns apperr NotFound for a gift that is
// not the actor's, and Conflict when it was used (gift_used), has expired (gift_expired) or,
// for render seconds, the user has no current plan (no_plan).
func (s *Service) UseGift(ctx context.Context, a actor.Actor, earnedGiftID string) (*EarnedGift, error) {
	now := s.now()
	return s.store.UseGift(ctx, a.UserID, earnedGiftID, func(g *EarnedGift) error {
		switch {
		case g.UsedAt != nil:
			return apperr.E(apperr.Conflict, "gift_used", "the gift was already used")
		case g.ExpiresAt != nil && !now.Before(*g.ExpiresAt):
			return apperr.E(apperr.Conflict, "gift_expired", "the gift has expired")
		}
		return nil
	}, now)
}
