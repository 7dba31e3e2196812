// Package httpapi is identity-svc's HTTP adapter for the platform operations (tag Platform):
// the JWKS and the OAuth token endpoint. Other tags live in the subpackages authapi and
// accountapi, each generated from the same api/openapi.yaml.
package httpapi

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

// Tokens is what the handlers need of the token issuer.
type Tokens interface {
	Service(ctx context.Context, clientID, secret string) (auth.Issued, error)
}

// Limiter refuses callers over a rate.
type Limiter interface {
	Check(ctx context.Context, key string, lim redisx.Limit) error
}

// Handler implements ServerInterface.
type Handler struct {
	tokens     Tokens
	jwks       []byte
	limiter    Limiter
	tokenLimit redisx.Limit
}

// NewHandler returns a Handler; jwks is the serialized public key set.
func NewHandler(tokens Tokens, jwks []byte, limiter Limiter, tokenPerMinute int) *Handler {
	return &Handler{tokens: tokens, jwks: jwks, limiter: limiter, tokenLimit: redisx.PerMinute(tokenPerMinute)}
}

// Policies says who may call each operation of this package.
func Policies() httpx.Policies {
	return httpx.Policies{
		"getJWKS":    httpx.Public(),
		"issueToken": httpx.Public(),
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
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
