package accountapi

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/wire"
)

// Users is what the handlers need of the user service.
type Users interface {
	Me(ctx context.Context, a actor.Actor) (*account.User, error)
	UpdateMe(ctx context.Context, a actor.Actor, in account.UserUpdate) (*account.User, error)
	SetAvatar(ctx context.Context, a actor.Actor, avatarID, avatarURL string) (*account.User, error)
	User(ctx context.Context, a actor.Actor, userID string) (*account.User, error)
	List(ctx context.Context, a actor.Actor, q account.UserQuery) (account.UserPage, error)
	BanUser(ctx context.Context, a actor.Actor, userID, reason string, until *time.Time) error
}

// GetMe answers the calling user.
func (h *Handler) GetMe(c echo.Context) error {
	u, err := h.users.Me(c.Request().Context(), caller.Of(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ToUser(u, time.Now()))
}

// UpdateMe changes the calling user's profile.
func (h *Handler) UpdateMe(c echo.Context) error {
	var body UserUpdate
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	in := account.UserUpdate{
		FullName: body.FullName, Slogan: body.Slogan, AboutMe: body.AboutMe, CompanyName: body.CompanyName,
		WebsiteName: body.WebsiteName, Gender: (*string)(body.Gender), EmailTellMe: body.EmailTellMe,
		SMSTellMe: body.SmsTellMe, PushTellMe: body.PushTellMe, TelegramTellMe: body.TelegramTellMe,
	}
	if body.BirthDate != nil {
		in.BirthDate = &body.BirthDate.Time
	}
	u, err := h.users.UpdateMe(c.Request().Context(), caller.Of(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ToUser(u, time.Now()))
}

// GetMyBalance answers the calling user's balances.
func (h *Handler) GetMyBalance(c echo.Context) error {
	u, err := h.users.Me(c.Request().Context(), caller.Of(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, UserBalance{
		BalanceMinor: u.BalanceMinor, AffiliateBalanceMinor: u.AffiliateBalanceMinor, Currency: h.currency,
		DailyRemainRenderCount: u.DailyRemainRenderCount, ParallelRenderingCeiling: u.ParallelRenderingCeiling,
	})
}

// SetMyAvatar sets the calling user's avatar.
func (h *Handler) SetMyAvatar(c echo.Context) error {
	var body AvatarUpdate
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	id := ""
	if body.AvatarId != nil {
		id = body.AvatarId.String()
	}
	u, err := h.users.SetAvatar(c.Request().Context(), caller.Of(c), id, deref(body.AvatarUrl))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ToUser(u, time.Now()))
}

// GetUser answers one user to an admin.
func (h *Handler) GetUser(c echo.Context, userID openapi_types.UUID) error {
	u, err := h.users.User(c.Request().Context(), caller.Of(c), userID.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ToUser(u, time.Now()))
}

// ListUsers answers a page of users to an admin.
func (h *Handler) ListUsers(c echo.Context, params ListUsersParams) error {
	q := account.UserQuery{Q: deref(params.Q), Page: pageParam(params.Page), PageSize: pageParam(params.PageSize)}
	if params.TenantId != nil {
		q.TenantID = params.TenantId.String()
	}
	page, err := h.users.List(c.Request().Context(), caller.Of(c), q)
	if err != nil {
		return err
	}
	now := time.Now()
	out := UserPage{Data: make([]User, len(page.Users))}
	for i, u := range page.Users {
		out.Data[i] = wire.ToUser(u, now)
	}
	out.Meta = wire.ToMeta(paging.Page{Number: page.Page, Size: page.PageSize}.Meta(int(page.Total)))
	return c.JSON(http.StatusOK, out)
}

// BanUser bans a user.
func (h *Handler) BanUser(c echo.Context, userID openapi_types.UUID) error {
	var body BanRequest
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	if err := h.users.BanUser(c.Request().Context(), caller.Of(c), userID.String(), body.Reason, body.UnblockDate); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
