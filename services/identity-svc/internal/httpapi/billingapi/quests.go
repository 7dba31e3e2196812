package billingapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/identity-svc/internal/quest"
)

// Quests is what the handlers need of the quest service.
type Quests interface {
	Quests(ctx context.Context, a actor.Actor) ([]quest.Quest, error)
	Claim(ctx context.Context, a actor.Actor, questID string) (*quest.Claimed, error)
	EarnedGifts(ctx context.Context, a actor.Actor) ([]quest.EarnedGift, error)
	UseGift(ctx context.Context, a actor.Actor, earnedGiftID string) (*quest.EarnedGift, error)
}

// ListQuests answers the caller's tenant's quests with the caller's progress.
func (h *Handler) ListQuests(c echo.Context) error {
	qs, err := h.quests.Quests(c.Request().Context(), caller.Of(c))
	if err != nil {
		return err
	}
	out := QuestList{Data: make([]Quest, len(qs))}
	for i := range qs {
		out.Data[i] = toQuestResponse(&qs[i])
	}
	return c.JSON(http.StatusOK, out)
}

// ClaimQuest claims a completed quest's prize.
func (h *Handler) ClaimQuest(c echo.Context, questID openapi_types.UUID) error {
	cl, err := h.quests.Claim(c.Request().Context(), caller.Of(c), questID.String())
	if err != nil {
		return err
	}
	out := QuestClaim{
		QuestId: uuidOf(cl.QuestID), PrizeType: QuestClaimPrizeType(cl.PrizeType), PrizeAmount: cl.PrizeAmount,
		ClaimedAt: cl.ClaimedAt,
	}
	if cl.EarnedGiftID != "" {
		id := uuidOf(cl.EarnedGiftID)
		out.EarnedGiftId = &id
	}
	return c.JSON(http.StatusOK, out)
}

// ListEarnedGifts answers the caller's unused gifts.
func (h *Handler) ListEarnedGifts(c echo.Context) error {
	gs, err := h.quests.EarnedGifts(c.Request().Context(), caller.Of(c))
	if err != nil {
		return err
	}
	out := EarnedGiftList{Data: make([]EarnedGift, len(gs))}
	for i := range gs {
		out.Data[i] = toEarnedGiftResponse(&gs[i])
	}
	return c.JSON(http.StatusOK, out)
}

// UseEarnedGift uses one of the caller's gifts.
func (h *Handler) UseEarnedGift(c echo.Context, earnedGiftID openapi_types.UUID) error {
	g, err := h.quests.UseGift(c.Request().Context(), caller.Of(c), earnedGiftID.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toEarnedGiftResponse(g))
}

func toQuestResponse(q *quest.Quest) Quest {
	return Quest{
		Id: uuidOf(q.ID), Title: q.Title, Challenge: q.Challenge, Why: q.Why, Hint: q.Hint, Icon: q.Icon,
		PrizeType: QuestPrizeType(q.PrizeType), QuestType: QuestQuestType(q.QuestType), TargetCount: q.TargetCount,
		CurrentCount: q.CurrentCount, IsCompleted: q.CompletedAt != nil, PrizeClaimed: q.ClaimedAt != nil,
		PrizeAmount: q.PrizeAmount, ExpiresAt: q.ExpiresAt,
	}
}

func toEarnedGiftResponse(g *quest.EarnedGift) EarnedGift {
	return EarnedGift{
		Id: uuidOf(g.ID), GiftId: uuidOf(g.GiftID), Name: g.Name, Description: g.Description,
		PrizeType: EarnedGiftPrizeType(g.PrizeType), Unit: g.Unit, Value: g.Value, EarnedAt: g.EarnedAt,
		ExpiresAt: g.ExpiresAt, IsUsed: g.UsedAt != nil, UsedAt: g.UsedAt,
	}
}
