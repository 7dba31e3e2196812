// Package authapi is identity-svc's HTTP adapter for registration, login, tokens, sessions,
// verification, MFA, OAuth login and push subscriptions (the operations tagged Auth). It also
// provides LiveSessions, the policy wrapper that refuses access tokens of revoked sessions on
// every authenticated operation of the service.
package authapi

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
	"github.com/motionstudio/platform/services/identity-svc/internal/push"
)

// Auth is what the handlers need of the auth service.
type Auth interface {
	Register(ctx context.Context, in auth.Registration) (*auth.User, error)
	Login(ctx context.Context, in auth.Login) (*auth.Grant, *auth.MFAPending, error)
	Refresh(ctx context.Context, refreshToken string, use auth.Use) (*auth.Grant, error)
	Logout(ctx context.Context, sessionID string) error
	ListSessions(ctx context.Context, userID string) ([]auth.Session, error)
	RevokeSession(ctx context.Context, userID, sessionID string) error
	ChangePassword(ctx context.Context, in auth.PasswordChange) error
	Verify(ctx context.Context, channel, token, code, ip string) (*auth.Verified, error)
	RequestReset(ctx context.Context, in auth.ResetRequest) error
	ConfirmReset(ctx context.Context, token, newPassword, ip string) error
	SetupMFA(ctx context.Context, tenantID, userID, factorType, label string) (*auth.MFASetup, error)
	VerifyMFA(ctx context.Context, userID, factorID, code string) (*auth.Factor, error)
	ChallengeMFA(ctx context.Context, mfaToken, code string, use auth.Use) (*auth.Grant, error)
	LoginOAuth(ctx context.Context, in auth.OAuthLogin) (*auth.Grant, *auth.MFAPending, error)
}

// Push is what the handlers need of the push-subscription service.
type Push interface {
	Subscribe(ctx context.Context, sub push.Subscription) (*push.Subscription, error)
	Unsubscribe(ctx context.Context, userID, endpoint string) error
}

// Deps are what a Handler is built from.
type Deps struct {
	Auth Auth
	Push Push
}

// Handler implements ServerInterface.
type Handler struct {
	auth Auth
	push Push
}

// NewHandler returns a Handler.
func NewHandler(d Deps) *Handler { return &Handler{auth: d.Auth, push: d.Push} }

// Policies says who may call each operation of this package.
func Policies(v *authn.Verifier) httpx.Policies {
	user := httpx.Allow(v.RequireUser())
	return httpx.Policies{
		"register":       httpx.Public(),
		"login":          httpx.Public(),
		"loginOAuth":     httpx.Public(),
		"refreshTokens":  httpx.Public(),
		"logout":         user,
		"listSessions":   user,
		"revokeSession":  user,
		"changePassword": user,

		"verifyEmail":          httpx.Public(),
		"verifyPhone":          httpx.Public(),
		"requestPasswordReset": httpx.Public(),
		"confirmPasswordReset": httpx.Public(),

		"setupMfa":     user,
		"verifyMfa":    user,
		"challengeMfa": httpx.Public(),

		"subscribePush":   user,
		"unsubscribePush": user,
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// Register creates an account.
func (h *Handler) Register(c echo.Context) error {
	var req RegisterRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	u, err := h.auth.Register(c.Request().Context(), auth.Registration{
		TenantSlug: req.TenantSlug, Email: str(req.Email), Phone: str(req.PhoneNumber), Password: req.Password,
		FullName: str(req.FullName), AffiliateCode: str(req.AffiliateCode), IPAddress: c.RealIP(),
	})
	if err != nil {
		return err
	}
	verify := (u.Email != nil && !u.EmailVerified) || (u.Phone != nil && !u.PhoneVerified)
	return c.JSON(http.StatusCreated, RegistrationResult{UserId: uuid.MustParse(u.ID), VerificationRequired: verify})
}

// Login checks credentials and opens a session.
func (h *Handler) Login(c echo.Context) error {
	var req LoginRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	g, pending, err := h.auth.Login(c.Request().Context(), auth.Login{
		TenantSlug: req.TenantSlug, Email: str(req.Email), Phone: str(req.PhoneNumber), Password: req.Password,
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

// RefreshTokens rotates a refresh token.
func (h *Handler) RefreshTokens(c echo.Context) error {
	var req RefreshRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	g, err := h.auth.Refresh(c.Request().Context(), req.RefreshToken, use(c))
	if err != nil {
		return err
	}
	return respondGrant(c, g)
}

// Logout revokes the calling session.
func (h *Handler) Logout(c echo.Context) error {
	if err := h.auth.Logout(c.Request().Context(), authn.FromContext(c).SessionID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ListSessions answers the caller's sessions.
func (h *Handler) ListSessions(c echo.Context) error {
	claims := authn.FromContext(c)
	list, err := h.auth.ListSessions(c.Request().Context(), claims.Subject)
	if err != nil {
		return err
	}
	out := SessionList{Sessions: make([]Session, 0, len(list))}
	for _, s := range list {
		out.Sessions = append(out.Sessions, toSession(s, claims.SessionID))
	}
	return c.JSON(http.StatusOK, out)
}

// RevokeSession revokes one of the caller's sessions.
func (h *Handler) RevokeSession(c echo.Context, sessionID openapi_types.UUID) error {
	if err := h.auth.RevokeSession(c.Request().Context(), authn.FromContext(c).Subject, sessionID.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ChangePassword changes the caller's password and revokes the other sessions.
func (h *Handler) ChangePassword(c echo.Context) error {
	var req PasswordChangeRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	claims := authn.FromContext(c)
	err := h.auth.ChangePassword(c.Request().Context(), auth.PasswordChange{
		TenantID: claims.TenantID, UserID: claims.Subject, SessionID: claims.SessionID,
		Current: req.CurrentPassword, New: req.NewPassword,
	})
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// SessionChecker tells whether an access token's session was revoked or its tenant stopped
// working after it was issued.
type SessionChecker interface {
	Revoked(ctx context.Context, sessionID, tenantID string, issuedAt time.Time) (bool, error)
}

// LiveSessions returns policies in which every authenticated operation also refuses, with
// apperr Unauthenticated (session_revoked), a user access token whose session was revoked
// (logout, session revocation, refresh-token reuse, password change) or whose tenant was
// suspended or cancelled after it was issued. Service tokens carry no session and pass.
func LiveSessions(p httpx.Policies, sessions SessionChecker) httpx.Policies {
	check := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			claims := authn.FromContext(c)
			if claims == nil || claims.IsService() || claims.SessionID == "" {
				return next(c)
			}
			revoked, err := sessions.Revoked(c.Request().Context(), claims.SessionID, claims.TenantID, claims.IssuedAt)
			if err != nil {
				return err
			}
			if revoked {
				c.Response().Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				return apperr.E(apperr.Unauthenticated, "session_revoked", "The session of this token was revoked.")
			}
			return next(c)
		}
	}
	out := make(httpx.Policies, len(p))
	for op, m := range p {
		if len(m) == 0 {
			out[op] = m
			continue
		}
		out[op] = append(append(make([]echo.MiddlewareFunc, 0, len(m)+1), m...), check)
	}
	return out
}

func use(c echo.Context) auth.Use {
	return auth.Use{IPAddress: c.RealIP(), UserAgent: c.Request().UserAgent()}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
