package authapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

// SetupMfa creates an unverified second factor for the caller.
func (h *Handler) SetupMfa(c echo.Context) error {
	var req MfaSetupRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	claims := authn.FromContext(c)
	out, err := h.auth.SetupMFA(c.Request().Context(), claims.TenantID, claims.Subject, string(req.FactorType), str(req.Label))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, MfaSetupResponse{
		FactorId: uuid.MustParse(out.Factor.ID), Secret: out.Secret, QrCodeUrl: out.URL, RecoveryCodes: out.RecoveryCodes,
	})
}

// VerifyMfa verifies a new factor with its first code.
func (h *Handler) VerifyMfa(c echo.Context) error {
	var req MfaVerifyRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if req.FactorId == uuid.Nil {
		return check.Field("validation_failed", "The factor_id is required.", "factor_id", "is required")
	}
	f, err := h.auth.VerifyMFA(c.Request().Context(), authn.FromContext(c).Subject, req.FactorId.String(), req.Code)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toFactor(*f))
}

// ChallengeMfa completes a login with a second factor.
func (h *Handler) ChallengeMfa(c echo.Context) error {
	var req MfaChallengeRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	g, err := h.auth.ChallengeMFA(c.Request().Context(), req.MfaToken, req.Code, use(c))
	if err != nil {
		return err
	}
	return respondGrant(c, g)
}

// respondMFARequired answers the 403 of a login that needs its second factor.
func respondMFARequired(c echo.Context, p *auth.MFAPending) error {
	out := MfaRequired{
		Code: MfaRequiredCodeMfaRequired, Detail: "A second factor is required; send a code with the mfa_token to /v1/auth/mfa/challenge.",
		MfaToken: p.Token, ExpiresIn: int(p.ExpiresIn / time.Second), Factors: make([]MfaFactor, 0, len(p.Factors)),
	}
	for _, f := range p.Factors {
		out.Factors = append(out.Factors, toFactor(f))
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusForbidden, out)
}

func toFactor(f auth.Factor) MfaFactor {
	return MfaFactor{Id: uuid.MustParse(f.ID), FactorType: MfaFactorFactorType(f.Type), Label: f.Label, Verified: f.VerifiedAt != nil}
}
