// Package httpapi is agentteam-svc's HTTP adapter for the module pings (tag Platform) and the
// place where every area's package is mounted with one merged, verified set of access policies.
// The areas live in subpackages generated from the same api/openapi.yaml, one per tag group:
// orgapi, boardapi. Property names are camelCase and errors are the spec's plain-text messages.
package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/api"
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

// Area is one tag group's package: its policies and how it mounts its handlers.
type Area struct {
	Policies httpx.Policies
	Register func(e *echo.Echo, policies httpx.Policies)
}

// Mount verifies that the areas' merged policies cover exactly the document's operations, then
// mounts the pings and every area.
func Mount(e *echo.Echo, areas ...Area) error {
	all := []httpx.Policies{Policies()}
	for _, a := range areas {
		all = append(all, a.Policies)
	}
	policies, err := httpx.Merge(all...)
	if err != nil {
		return err
	}
	if err := policies.Verify(api.OpenAPI); err != nil {
		return err
	}
	RegisterHandlersWithOptions(e, Handler{}, RegisterHandlersOptions{OperationMiddlewares: policies})
	for _, a := range areas {
		a.Register(e, policies)
	}
	return nil
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
