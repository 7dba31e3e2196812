package authn

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/logx"
)

// RequireUser admits requests with a valid user access token. It returns apperr Unauthenticated
// for a missing or invalid bearer token and apperr Forbidden for a service token.
func (v *Verifier) RequireUser() echo.MiddlewareFunc {
	return v.require(func(c *Claims) error {
		if c.TokenUse != TokenUseAccess {
			return apperr.E(apperr.Forbidden, "", "A user access token is required.")
		}
		return nil
	})
}

// RequireService admits requests with a valid service token. It returns apperr Unauthenticated
// for a missing or invalid bearer token and apperr Forbidden for a user token, admin or not.
func (v *Verifier) RequireService() echo.MiddlewareFunc {
	return v.require(func(c *Claims) error {
		if !c.IsService() {
			return apperr.E(apperr.Forbidden, "", "A service token is required.")
		}
		return nil
	})
}

// RequireAdmin admits requests with a valid access token of a platform admin. It returns apperr
// Unauthenticated for a missing or invalid bearer token and apperr Forbidden for anyone else.
func (v *Verifier) RequireAdmin() echo.MiddlewareFunc {
	return v.require(func(c *Claims) error {
		if c.TokenUse != TokenUseAccess || !c.Admin {
			return apperr.E(apperr.Forbidden, "", "A platform administrator is required.")
		}
		return nil
	})
}

// UserOrService admits requests with any valid access or service token. It returns apperr
// Unauthenticated for a missing or invalid bearer token.
func (v *Verifier) UserOrService() echo.MiddlewareFunc {
	return v.require(func(*Claims) error { return nil })
}

// require verifies the bearer token, applies allow and stores the claims in the echo context
// and the request context (with the subject as a log attribute).
func (v *Verifier) require(allow func(*Claims) error) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			claims, err := v.Verify(req.Context(), bearerToken(req))
			if err != nil {
				return err
			}
			if err := allow(claims); err != nil {
				return err
			}
			c.Set(claimsKey, claims)
			ctx := logx.WithAttrs(withClaims(req.Context(), claims), slog.String("subject", claims.Subject))
			c.SetRequest(req.WithContext(ctx))
			return next(c)
		}
	}
}

// bearerToken is the token of an "Authorization: Bearer <token>" header, or "".
func bearerToken(req *http.Request) string {
	scheme, token, ok := strings.Cut(req.Header.Get(echo.HeaderAuthorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
