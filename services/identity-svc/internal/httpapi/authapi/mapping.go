package authapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/wire"
)

// respondGrant answers AuthTokens; token answers are never cached.
func respondGrant(c echo.Context, g *auth.Grant) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	bearer := Bearer
	user, tenant := wire.ToUser(g.User, time.Now()), wire.ToTenant(g.Tenant)
	return c.JSON(http.StatusOK, AuthTokens{
		AccessToken: g.AccessToken, RefreshToken: g.RefreshToken, ExpiresIn: int(g.ExpiresIn / time.Second),
		TokenType: &bearer, User: &user, Tenant: &tenant,
	})
}

func toSession(s auth.Session, currentID string) Session {
	return Session{
		Id: uuid.MustParse(s.ID), DeviceName: s.DeviceName, UserAgent: s.UserAgent, IpAddress: s.IPAddress,
		IssuedAt: s.IssuedAt, LastUsedAt: s.LastUsedAt, IsCurrent: s.ID == currentID,
	}
}
