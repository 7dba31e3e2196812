// Package authn signs and verifies the platform's JWTs (EdDSA, ES256 or RS256, with a key id)
// and provides the echo middleware that admits users, service clients and platform admins. A
// token's alg must be one of those and the one its key in the JWKS is published for, so
// algorithm confusion (alg none, HMAC keyed with the public key) cannot succeed. Failures are apperr errors returned to echo's error handler: Unauthenticated (401)
// when the bearer token is missing or invalid, Forbidden (403) when the caller is of the wrong kind.
package authn

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"
)

// The token_use values.
const (
	TokenUseAccess  = "access"
	TokenUseService = "service"
)

// Claims are the platform's token claims; the JSON names are in the comments.
type Claims struct {
	Issuer    string // iss
	Subject   string // sub: the user id, or the client id of a service token
	TenantID  string // tid
	SessionID string // sid
	ID        string // jti
	// Audience (aud) names the services the token is for; a Verifier with an audience refuses
	// a token that does not name it.
	Audience []string

	Admin       bool // adm: platform admin
	TenantAdmin bool // tadm

	TokenUse string   // token_use: TokenUseAccess or TokenUseService
	Scopes   []string // scope, space separated in the token

	IssuedAt  time.Time // iat
	ExpiresAt time.Time // exp
}

// IsService reports whether the claims come from a service (client-credentials) token.
func (c *Claims) IsService() bool { return c.TokenUse == TokenUseService }

// claimsKey is the echo.Context key; echo keys are strings, so it is namespaced.
const claimsKey = "authn.claims"

type ctxKey struct{}

// FromContext returns the claims the middleware admitted, or nil when the request was not
// authenticated.
func FromContext(c echo.Context) *Claims {
	if cl, ok := c.Get(claimsKey).(*Claims); ok {
		return cl
	}
	return FromCtx(c.Request().Context())
}

// FromCtx returns the claims stored in the request context by the middleware, or nil.
func FromCtx(ctx context.Context) *Claims {
	cl, _ := ctx.Value(ctxKey{}).(*Claims)
	return cl
}

// withClaims stores claims in ctx.
func withClaims(ctx context.Context, c *Claims) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}
