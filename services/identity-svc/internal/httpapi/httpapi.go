// Package httpapi is identity-svc's HTTP adapter: the handlers of the generated server
// interface, request validation and mapping between wire and domain types.
package httpapi

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/services/identity-svc/api"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
	"github.com/motionstudio/platform/services/identity-svc/internal/token"
)

// Accounts is what the handlers need of the account service.
type Accounts interface {
	User(ctx context.Context, tenantID, userID string) (*account.User, error)
}

// Tokens is what the handlers need of the token issuer.
type Tokens interface {
	Service(ctx context.Context, clientID, secret string) (token.Issued, error)
}

// Limiter refuses callers over a rate.
type Limiter interface {
	Check(ctx context.Context, key string, lim redisx.Limit) error
}

// Handler implements ServerInterface.
type Handler struct {
	accounts   Accounts
	tokens     Tokens
	jwks       []byte
	limiter    Limiter
	tokenLimit redisx.Limit
}

// NewHandler returns a Handler; jwks is the serialized public key set.
func NewHandler(accounts Accounts, tokens Tokens, jwks []byte, limiter Limiter, tokenPerMinute int) *Handler {
	return &Handler{accounts: accounts, tokens: tokens, jwks: jwks, limiter: limiter, tokenLimit: redisx.PerMinute(tokenPerMinute)}
}

// Register mounts every operation of the OpenAPI document on e with its access policy.
func Register(e *echo.Echo, h *Handler, v *authn.Verifier) error {
	policies := httpx.Policies{
		"getJWKS":    httpx.Public(),
		"issueToken": httpx.Public(),
		"getMe":      httpx.Allow(v.RequireUser()),
	}
	if err := policies.Verify(api.OpenAPI); err != nil {
		return err
	}
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
	return nil
}

// GetJWKS answers the public key set; caches may keep it briefly, rotation keeps old keys published.
func (h *Handler) GetJWKS(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSONBlob(http.StatusOK, h.jwks)
}

// IssueToken implements the client-credentials grant (RFC 6749 section 4.4).
func (h *Handler) IssueToken(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Pragma", "no-cache")
	if err := h.limiter.Check(c.Request().Context(), "oauth-token:"+c.RealIP(), h.tokenLimit); err != nil {
		return oauthError(c, http.StatusTooManyRequests, SlowDown, "too many token requests", err)
	}
	if err := c.Request().ParseForm(); err != nil {
		return oauthError(c, http.StatusBadRequest, InvalidRequest, "the body must be application/x-www-form-urlencoded", nil)
	}
	form := c.Request().PostForm
	if form.Get("grant_type") != "client_credentials" {
		return oauthError(c, http.StatusBadRequest, UnsupportedGrantType, "only grant_type=client_credentials is supported", nil)
	}
	id, secret, basic := c.Request().BasicAuth()
	if !basic {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	if id == "" || secret == "" {
		return oauthError(c, http.StatusUnauthorized, InvalidClient, "client credentials are required", nil)
	}
	issued, err := h.tokens.Service(c.Request().Context(), id, secret)
	if apperr.Is(err, apperr.Unauthenticated) {
		return oauthError(c, http.StatusUnauthorized, InvalidClient, "unknown client or wrong secret", nil)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, TokenResponse{
		AccessToken: issued.Token, TokenType: Bearer, ExpiresIn: int(issued.ExpiresIn / time.Second),
	})
}

// oauthError answers the RFC 6749 section 5.2 error document that OAuth clients parse.
func oauthError(c echo.Context, status int, code OAuthErrorError, description string, cause error) error {
	if e, ok := apperr.As(cause); ok && e.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	if status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Basic realm="motionstudio"`)
	}
	return c.JSON(status, OAuthError{Error: code, ErrorDescription: &description})
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
		Id:                       uuidOf(u.ID),
		TenantId:                 uuidOf(u.TenantID),
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

// uuidOf converts an id read from a uuid column, which is always well formed.
func uuidOf(s string) openapi_types.UUID { return uuid.MustParse(s) }
