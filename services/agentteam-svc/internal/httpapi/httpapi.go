// Package httpapi is agentteam-svc's HTTP adapter: the handlers of the generated server
// interface, request validation and mapping between wire and domain types. Property names are
// camelCase and errors are the spec's plain-text messages.
package httpapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/api"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
)

// Board is what the handlers need of the board service.
type Board interface {
	Cartable(ctx context.Context, memberID string) ([]board.WorkItem, error)
}

// Handler implements ServerInterface.
type Handler struct{ board Board }

// NewHandler returns a Handler.
func NewHandler(b Board) *Handler { return &Handler{board: b} }

// Register mounts every operation of the OpenAPI document on e with its access policy.
func Register(e *echo.Echo, h *Handler, v *authn.Verifier) error {
	policies := httpx.Policies{
		"pingOrgboard":  httpx.Public(),
		"pingSkills":    httpx.Public(),
		"pingAssembler": httpx.Public(),
		"getCartable":   httpx.Allow(v.RequireUser()),
	}
	if err := policies.Verify(api.OpenAPI); err != nil {
		return err
	}
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
	return nil
}

// PingOrgboard answers the organization board module's ping.
func (h *Handler) PingOrgboard(c echo.Context) error { return ping(c, Orgboard) }

// PingSkills answers the skill library module's ping.
func (h *Handler) PingSkills(c echo.Context) error { return ping(c, Skills) }

// PingAssembler answers the agent-run module's ping.
func (h *Handler) PingAssembler(c echo.Context) error { return ping(c, Assembler) }

func ping(c echo.Context, module PingModule) error {
	return c.JSON(http.StatusOK, Ping{Module: module, Status: Ok})
}

// GetCartable answers the caller's assigned tasks.
func (h *Handler) GetCartable(c echo.Context) error {
	member, err := memberID(c)
	if err != nil {
		return err
	}
	items, err := h.board.Cartable(c.Request().Context(), member.String())
	if err != nil {
		return err
	}
	out := make([]WorkItem, len(items))
	for i, it := range items {
		out[i] = toWorkItemResponse(it)
	}
	return c.JSON(http.StatusOK, out)
}

// memberID is the caller's member id: the user id of the access token.
func memberID(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(authn.FromContext(c).Subject)
	if err != nil {
		return uuid.Nil, apperr.E(apperr.Unauthenticated, "", "the token's subject is not a member id")
	}
	return id, nil
}

func toWorkItemResponse(w board.WorkItem) WorkItem {
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
