// Package httpapi is identity-svc's HTTP adapter for the platform operations (tag Platform):
// the OpenID / OAuth discovery documents, the JWKS and the OAuth token endpoint. Other tags live in the subpackages authapi and
// accountapi, each generated from the same api/openapi.yaml.
package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

// Tokens is what the handlers need of the token issuer.
type Tokens interface {
	Service(ctx context.Context, clientID, secret string, audiences []string) (auth.Issued, error)
}

// Keys are the published signing keys.
type Keys interface {
	// PublicSet is the JWKS.
	PublicSet() jwk.Set
	// Algorithms are the algorithms of the published keys.
	Algorithms() []string
}

// Limiter refuses callers over a rate.
type Limiter interface {
	Check(ctx context.Context, key string, lim redisx.Limit) error
}

// Handler implements ServerInterface.
type Handler struct {
	tokens     Tokens
	keys       Keys
	issuer     string
	limiter    Limiter
	tokenLimit redisx.Limit
}

// NewHandler returns a Handler; issuer is the tokens' iss, the base of the discovery
// document's endpoint URLs.
func NewHandler(tokens Tokens, keys Keys, issuer string, limiter Limiter, tokenPerMinute int) *Handler {
	return &Handler{tokens: tokens, keys: keys, issuer: strings.TrimSuffix(issuer, "/"), limiter: limiter, tokenLimit: redisx.PerMinute(tokenPerMinute)}
}

// Policies says who may call each operation of this package.
func Policies() httpx.Policies {
	return httpx.Policies{
		"getJWKS":                        httpx.Public(),
		"issueToken":                     httpx.Public(),
		"getOpenIDConfiguration":         httpx.Public(),
		"getAuthorizationServerMetadata": httpx.Public(),
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// GetJWKS answers the public key set; caches may keep it briefly, since rotation publishes a key
// ahead of its use and keeps a retired one until its tokens expire.
func (h *Handler) GetJWKS(c echo.Context) error {
	jwks, err := json.Marshal(h.keys.PublicSet())
	if err != nil {
		return fmt.Errorf("httpapi: encode jwks: %w", err)
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSONBlob(http.StatusOK, jwks)
}

// GetOpenIDConfiguration answers the OpenID Connect discovery document.
func (h *Handler) GetOpenIDConfiguration(c echo.Context) error {
	return h.metadata(c)
}

// GetAuthorizationServerMetadata answers the RFC 8414 metadata, the same document.
func (h *Handler) GetAuthorizationServerMetadata(c echo.Context) error {
	return h.metadata(c)
}

func (h *Handler) metadata(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSON(http.StatusOK, ProviderMetadata{
		Issuer:                            h.issuer,
		JwksUri:                           h.issuer + "/.well-known/jwks.json",
		TokenEndpoint:                     h.issuer + "/v1/oauth/token",
		GrantTypesSupported:               []string{"client_credentials"},
		TokenEndpointAuthMethodsSupported: []string{"client_secret_basic", "client_secret_post"},
		IdTokenSigningAlgValuesSupported:  h.keys.Algorithms(),
		ResponseTypesSupported:            []string{},
		SubjectTypesSupported:             []string{"public"},
	})
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
	audiences := slices.Concat(form["resource"], form["audience"])
	issued, err := h.tokens.Service(c.Request().Context(), id, secret, audiences)
	if apperr.Is(err, apperr.Unauthenticated) {
		return oauthError(c, http.StatusUnauthorized, InvalidClient, "unknown client or wrong secret", nil)
	}
	if e, ok := apperr.As(err); ok && e.Code == string(InvalidTarget) {
		return oauthError(c, http.StatusBadRequest, InvalidTarget, "the client may not have a token for this resource", nil)
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
