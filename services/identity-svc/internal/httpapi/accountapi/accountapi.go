// Package accountapi is identity-svc's HTTP adapter for users, tenants, API keys and webhooks
// (the operations tagged Users, Tenants, ApiKeys and Webhooks).
package accountapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
)

// Accounts is what the handlers need of the account service.
type Accounts interface {
	User(ctx context.Context, tenantID, userID string) (*account.User, error)
}

// Handler implements ServerInterface.
type Handler struct {
	accounts Accounts
}

// NewHandler returns a Handler.
func NewHandler(accounts Accounts) *Handler { return &Handler{accounts: accounts} }

// Policies says who may call each operation of this package.
func Policies(v *authn.Verifier) httpx.Policies {
	return httpx.Policies{
		"getMe": httpx.Allow(v.RequireUser()),
	}
}

// Register mounts this package's operations on e with the service's merged policies.
func Register(e *echo.Echo, h *Handler, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// GetMe answers the calling user.
func (h *Handler) GetMe(c echo.Context) error {
	claims := authn.FromContext(c)
	u, err := h.accounts.User(c.Request().Context(), claims.TenantID, claims.Subject)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toUserResponse(u))
}

func toUserResponse(u *account.User) User {
	return User{
		Id:                       uuid.MustParse(u.ID),
		TenantId:                 uuid.MustParse(u.TenantID),
		Email:                    u.Email,
		EmailVerified:            u.EmailVerified,
		PhoneNumber:              u.Phone,
		PhoneVerified:            u.PhoneVerified,
		FullName:                 u.FullName,
		AvatarUrl:                u.AvatarURL,
		IsAdmin:                  u.IsAdmin,
		IsTenantAdmin:            u.IsTenantAdmin,
		RegisterMode:             u.RegisterMode,
		LastActiveDate:           u.LastActive,
		RegisterDate:             u.RegisteredAt,
		BalanceMinor:             u.BalanceMinor,
		AffiliateBalanceMinor:    u.AffiliateBalanceMinor,
		LoyaltyScore:             u.LoyaltyScore,
		DailyRemainRenderCount:   u.DailyRemainRenderCount,
		MaxDailyRenderCount:      u.MaxDailyRenderCount,
		ParallelRenderingCeiling: u.ParallelRenderingCeiling,
		UsedStorageBytes:         u.UsedStorageBytes,
	}
}
