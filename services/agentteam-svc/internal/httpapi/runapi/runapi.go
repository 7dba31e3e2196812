// Package runapi is agentteam-svc's HTTP adapter for agent runs, model connections and MCP
// servers (tag Assembler).
package runapi

import (
	"context"
	"log/slog"

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
	Events(ctx context.Context, memberID, id string) (run.Run, run.EventReader, error)
}

// Handler implements ServerInterface.
type Handler struct {
	runs    Runs
	changes Changes
	// streams holds a token per open event stream, up to the process's bound.
	streams chan struct{}
	log     *slog.Logger
}

// NewHandler returns a Handler that serves up to maxStreams event streams at once, woken by
// changes, and logs the streams that broke off to log.
func NewHandler(runs Runs, changes Changes, maxStreams int, log *slog.Logger) *Handler {
	return &Handler{runs: runs, changes: changes, streams: newStreams(maxStreams), log: log}
}

// Policies says who may call each operation of this package: members only, the domain checks
// their capabilities.
func Policies(v *authn.Verifier) httpx.Policies {
	user := httpx.Allow(v.RequireUser())
	return httpx.Policies{
		"createRun":       user,
		"listRuns":        user,
		"getRun":          user,
		"cancelRun":       user,
		"listRunSteps":    user,
		"streamRunEvents": user,
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}
