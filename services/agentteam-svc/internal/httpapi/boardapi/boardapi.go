// Package boardapi is agentteam-svc's HTTP adapter for the organization board (tag Board):
// structure, teams, tasks, the board, seats, agents, performance and the audit log.
package boardapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
)

// Board is what the handlers need of the board service.
type Board interface {
	Cartable(ctx context.Context, memberID string) ([]board.WorkItem, error)
}

// Handler implements ServerInterface.
type Handler struct{ board Board }

// NewHandler returns a Handler.
func NewHandler(b Board) *Handler { return &Handler{board: b} }

// Policies says who may call each operation of this package: members only, the domain checks
// their capabilities.
func Policies(v *authn.Verifier) httpx.Policies {
	user := httpx.Allow(v.RequireUser())
	return httpx.Policies{
		"getCartable": user,
	}
}

// Register mounts this package's operations on e with the service's merged policies.
func (h *Handler) Register(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// GetCartable answers the caller's assigned tasks.
func (h *Handler) GetCartable(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	items, err := h.board.Cartable(c.Request().Context(), member)
	if err != nil {
		return err
	}
	out := make([]WorkItem, len(items))
	for i, it := range items {
		out[i] = toWorkItem(it)
	}
	return c.JSON(http.StatusOK, out)
}

func toWorkItem(w board.WorkItem) WorkItem {
	return WorkItem{
		Id:           uuid.MustParse(w.ID),
		TeamId:       uuid.MustParse(w.TeamID),
		Title:        w.Title,
		Description:  w.Description,
		Type:         w.Type,
		Status:       WorkItemStatus(w.Status),
		AssigneeKind: (*WorkItemAssigneeKind)(w.AssigneeKind),
		AssigneeId:   optionalUUID(w.AssigneeID),
		ParentId:     optionalUUID(w.ParentID),
		CreatedAt:    w.CreatedAt,
		UpdatedAt:    w.UpdatedAt,
	}
}

func optionalUUID(s *string) *openapi_types.UUID {
	if s == nil {
		return nil
	}
	u := uuid.MustParse(*s)
	return &u
}
