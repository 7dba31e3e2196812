package runapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/ids"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// ListApprovals answers a page of the tool calls waiting for a person in an organization.
func (h *Handler) ListApprovals(c echo.Context, params ListApprovalsParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, total, err := h.runs.Approvals(c.Request().Context(), member, params.OrganizationId.String(), p)
	if err != nil {
		return err
	}
	out := ApprovalPage{Data: make([]PendingToolCall, len(list)), Meta: PageMeta{
		Page: p.Offset/p.Limit + 1, PageSize: p.Limit, Total: total, HasMore: p.Offset+len(list) < total,
	}}
	for i, a := range list {
		out.Data[i] = PendingToolCall{
			RunId: uuid.MustParse(a.RunID), CallId: a.CallID, Tool: a.Tool, FunctionName: a.FunctionName, ServerId: ids.Optional(a.ServerID),
			Risk: a.Risk, Arguments: a.Arguments, RequestedAt: a.RequestedAt,
		}
	}
	return c.JSON(http.StatusOK, out)
}

// ApproveToolCall approves a waiting tool call and answers its run.
func (h *Handler) ApproveToolCall(c echo.Context, id RunIdPath, callID CallIdPath) error {
	return h.decide(c, id.String(), callID, h.calls.ApproveCall)
}

// RejectToolCall rejects a waiting tool call and answers its run.
func (h *Handler) RejectToolCall(c echo.Context, id RunIdPath, callID CallIdPath) error {
	return h.decide(c, id.String(), callID, h.calls.RejectCall)
}

// decide binds the optional decision body and records the decision.
func (h *Handler) decide(c echo.Context, runID, callID string,
	decide func(ctx context.Context, memberID, runID, callID string, note *string) (run.Run, error)) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req ToolCallDecision
	if err := httpx.BindOptional(c, &req); err != nil {
		return err
	}
	r, err := decide(c.Request().Context(), member, runID, callID, req.Note)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAgentRun(r))
}
