// Package httpapi is agentteam-svc's HTTP adapter for the module pings (tag Platform). The
// other areas live in subpackages generated from the same api/openapi.yaml, one per tag group
// (orgapi, boardapi, ...); app mounts them all with httpx.Mount. Property names are camelCase
// and errors are the spec's plain-text messages.
package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/httpx"
)

// Handler implements ServerInterface.
type Handler struct{}

// Policies says who may call each operation of this package.
func Policies() httpx.Policies {
	return httpx.Policies{
		"pingOrgboard":  httpx.Public(),
		"pingSkills":    httpx.Public(),
		"pingAssembler": httpx.Public(),
	}
}

// Mount mounts the pings on e with the service's merged policies.
func (h Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// PingOrgboard answers the organization board module's ping.
func (Handler) PingOrgboard(c echo.Context) error { return ping(c, Orgboard) }

// PingSkills answers the skill library module's ping.
func (Handler) PingSkills(c echo.Context) error { return ping(c, Skills) }

// PingAssembler answers the agent-run module's ping.
func (Handler) PingAssembler(c echo.Context) error { return ping(c, Assembler) }

func ping(c echo.Context, module PingModule) error {
	return c.JSON(http.StatusOK, Ping{Module: module, Status: Ok})
}
