package authapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

// respondGrant answers AuthTokens; token answers are never cached.
func respondGrant(c echo.Context, g *auth.Grant) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	bearer := Bearer
	return c.JSON(http.StatusOK, AuthTokens{
		AccessToken: g.AccessToken, RefreshToken: g.RefreshToken, ExpiresIn: int(g.ExpiresIn / time.Second),
		TokenType: &bearer, User: toUser(g.User), Tenant: toTenant(g.Tenant),
	})
}

func toSession(s auth.Session, currentID string) Session {
	return Session{
		Id: uuid.MustParse(s.ID), DeviceName: s.DeviceName, UserAgent: s.UserAgent, IpAddress: s.IPAddress,
		IssuedAt: s.IssuedAt, LastUsedAt: s.LastUsedAt, IsCurrent: s.ID == currentID,
	}
}

func toUser(u *auth.User) *User {
	return &User{
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

func toTenant(t *auth.Tenant) *Tenant {
	return &Tenant{
		Id: uuid.MustParse(t.ID), Slug: t.Slug, Name: t.Name, Kind: TenantKind(t.Kind), Status: TenantStatus(t.Status),
		CustomDomain: t.CustomDomain, DomainVerified: t.DomainVerified, ContactEmail: t.ContactEmail,
		MaxUsers: t.MaxUsers, MaxStorageGb: t.MaxStorageGB, MonthlyRenderQty: t.MonthlyRenderQty,
		TrialEndsAt: t.TrialEndsAt, CreatedAt: t.CreatedAt,
	}
}
