// Package caller turns the verified token of an HTTP request into the domain's actor, the one
// mapping every identity HTTP package uses.
package caller

import (
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// Of is the caller the operation's policy admitted; the zero Actor when the operation is public.
func Of(c echo.Context) actor.Actor {
	cl := authn.FromContext(c)
	if cl == nil {
		return actor.Actor{}
	}
	if cl.IsService() {
		return actor.Actor{Service: true}
	}
	return actor.Actor{UserID: cl.Subject, TenantID: cl.TenantID, PlatformAdmin: cl.Admin, TenantAdmin: cl.TenantAdmin}
}
