package boardapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/ids"
)

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
	return c.JSON(http.StatusOK, mapAll(items, toWorkItem))
}

// CreateTask puts a task in the team's Backlog.
func (h *Handler) CreateTask(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req CreateTaskRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	t := board.NewTask{TeamID: req.TeamId.String(), Title: deref(req.Title), Description: deref(req.Description), Type: deref(req.Type)}
	w, err := h.board.CreateTask(c.Request().Context(), member, t)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toWorkItem(w))
}

// BoardPageSize is how many tasks of each column the board shows when the client asks for no
// page size: a screenful, with each column's total telling how many more there are.
const BoardPageSize = 20

// GetBoard answers the team's board, from the encoded copy of its current version when there
// is one.
func (h *Handler) GetBoard(c echo.Context, params GetBoardParams) error {
	size := params.PageSize
	if size == nil {
		d := BoardPageSize
		size = &d
	}
	member, p, err := caller.MemberAndPage(c, params.Page, size)
	if err != nil {
		return err
	}
	ctx, team := c.Request().Context(), params.TeamId.String()
	version, err := h.board.BoardVersion(ctx, member, team)
	if err != nil {
		return err
	}
	key := boardKey{team: team, version: version, offset: p.Offset, limit: p.Limit}
	if b, ok := h.boards.Get(key); ok {
		return b.send(c)
	}
	cols, err := h.board.Board(ctx, member, team, p)
	if err != nil {
		return err
	}
	out := Board{TeamId: params.TeamId, Columns: make([]BoardColumn, len(cols))}
	for i, col := range cols {
		out.Columns[i] = BoardColumn{Status: BoardColumnStatus(col.Status), Total: col.Total, Tasks: mapAll(col.Tasks, toWorkItem)}
	}
	plain, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("boardapi: encode board: %w", err)
	}
	b, err := encodeBoard(plain)
	if err != nil {
		return err
	}
	h.boards.Put(key, b)
	return b.send(c)
}

// MoveTask moves a task to a column.
func (h *Handler) MoveTask(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req MoveTaskRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	w, err := h.board.Move(c.Request().Context(), member, id.String(), req.Status)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toWorkItem(w))
}

// AssignTask assigns a task to a member.
func (h *Handler) AssignTask(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req AssignTaskRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	w, err := h.board.Assign(c.Request().Context(), member, id.String(), req.MemberId.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toWorkItem(w))
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
		AssigneeId:   ids.Optional(w.AssigneeID),
		ParentId:     ids.Optional(w.ParentID),
		CreatedAt:    w.CreatedAt,
		UpdatedAt:    w.UpdatedAt,
	}
}
