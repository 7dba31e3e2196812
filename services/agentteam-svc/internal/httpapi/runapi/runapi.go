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
	Approvals(ctx context.Context, memberID, organizationID string, p org.Page) ([]run.Approval, int, error)
	Events(ctx context.Context, memberID, id string) (run.Run, run.EventReader, error)
}

// Calls is what the handlers need to decide tool calls waiting for a person (memory.Service,
// which remembers each decision).
type Calls interface {
	ApproveCall(ctx context.Context, memberID, runID, callID string, note *string) (run.Run, error)
	RejectCall(ctx context.Context, memberID, runID, callID string, note *string) (run.Run, error)
}

// Handler implements ServerInterface.
type Handler struct {
	runs    Runs
	calls   Calls
	changes Changes
	// streams holds a token per open event stream, up to the process's bound.
	streams chan struct{}
	log     *slog.Logger
}

// NewHandler returns a Handler that decides tool calls through calls and serves up to
// maxStreams event streams at once, woken by changes, logging the streams that broke off to log.
func NewHandler(runs Runs, calls Calls, changes Changes, maxStreams int, log *slog.Logger) *Handler {
	return &Handler{runs: runs, calls: calls, changes: changes, streams: newStreams(maxStreams), log: log}
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
		"listApprovals":   user,
		"approveToolCall": user,
		"rejectToolCall":  user,
		"streamRunEvents": user,
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}
