package authapi

import (
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

// LoginOAuth logs in with an external provider's authorization code.
func (h *Handler) LoginOAuth(c echo.Context, provider string) error {
	var req OAuthLoginRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	g, pending, err := h.auth.LoginOAuth(c.Request().Context(), auth.OAuthLogin{
		Provider: provider, TenantSlug: req.TenantSlug, Code: req.Code, RedirectURI: str(req.RedirectUri),
		DeviceID: str(req.DeviceId), DeviceName: str(req.DeviceName), IPAddress: c.RealIP(), UserAgent: c.Request().UserAgent(),
	})
	if err != nil {
		return err
	}
	if pending != nil {
		return respondMFARequired(c, pending)
	}
	return respondGrant(c, g)
}
