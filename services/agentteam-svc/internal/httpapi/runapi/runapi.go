// Package runapi is agentteam-svc's HTTP adapter for agent runs, model connections and MCP
// servers (tag Assembler).
package runapi

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// Runs is what the handlers need of the run service.
type Runs interface {
	Create(ctx context.Context, memberID, seatID, workItemID string) (run.Run, error)
	Get(ctx context.Context, memberID, id string) (run.Run, error)
	List(ctx context.Context, memberID string, workItemID, seatID *string, p org.Page) ([]run.Run, error)
	Cancel(ctx context.Context, memberID, id string) (run.Run, error)
	Steps(ctx context.Context, memberID, id string, p org.Page) ([]run.Step, error)
}

// Handler implements ServerInterface.
type Handler struct{ runs Runs }

// NewHandler returns a Handler.
func NewHandler(runs Runs) *Handler { return &Handler{runs: runs} }

// Policies says who may call each operation of this package: members only, the domain checks
// their capabilities.
func Policies(v *authn.Verifier) httpx.Policies {
	user := httpx.Allow(v.RequireUser())
	return httpx.Policies{
		"createRun":    user,
		"listRuns":     user,
		"getRun":       user,
		"cancelRun":    user,
		"listRunSteps": user,
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}
