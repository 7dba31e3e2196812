package authapi

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
	"github.com/motionstudio/platform/services/identity-svc/internal/notify"
)

// VerifyEmail confirms an email address.
func (h *Handler) VerifyEmail(c echo.Context) error { return h.verify(c, notify.Email) }

// VerifyPhone confirms a phone number.
func (h *Handler) VerifyPhone(c echo.Context) error { return h.verify(c, notify.SMS) }

func (h *Handler) verify(c echo.Context, channel string) error {
	var req VerifyRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	v, err := h.auth.Verify(c.Request().Context(), channel, req.Token, req.Code, c.RealIP())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, VerificationResult{UserId: uuid.MustParse(v.UserID), EmailVerified: v.EmailVerified, PhoneVerified: v.PhoneVerified})
}

// RequestPasswordReset sends a reset link if the account exists; the answer never tells.
func (h *Handler) RequestPasswordReset(c echo.Context) error {
	var req PasswordResetRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	err := h.auth.RequestReset(c.Request().Context(), auth.ResetRequest{
		TenantSlug: req.TenantSlug, Email: str(req.Email), Phone: str(req.PhoneNumber), IPAddress: c.RealIP(),
	})
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusAccepted)
}

// ConfirmPasswordReset sets a new password with a reset token.
func (h *Handler) ConfirmPasswordReset(c echo.Context) error {
	var req PasswordResetConfirm
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := h.auth.ConfirmReset(c.Request().Context(), req.Token, req.NewPassword, c.RealIP()); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, PasswordResetResult{PasswordChanged: true})
}
