package boardapi

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/ids"
)

// GetPerformance answers the work per assignee.
func (h *Handler) GetPerformance(c echo.Context, params GetPerformanceParams) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	p, err := h.board.Performance(c.Request().Context(), member, params.OrganizationId.String(), ids.OptionalString(params.TeamId))
	if err != nil {
		return err
	}
	out := Performance{
		OrganizationId: params.OrganizationId, TeamId: params.TeamId, UnassignedPending: p.UnassignedPending,
		Assignees: mapAll(p.Assignees, toAssigneePerformance),
	}
	return c.JSON(http.StatusOK, out)
}

// ListAudit answers the organization's audit log.
func (h *Handler) ListAudit(c echo.Context, params ListAuditParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.board.AuditLog(c.Request().Context(), member, params.OrganizationId.String(), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapAll(list, toAuditRecord))
}

func toAssigneePerformance(f board.AssigneeFigures) AssigneePerformance {
	return AssigneePerformance{
		AssigneeKind: AssigneePerformanceAssigneeKind(deref(f.AssigneeKind)), AssigneeId: uuid.MustParse(deref(f.AssigneeID)),
		Pending: PendingCounts{Backlog: f.Backlog, InProgress: f.InProgress, InReview: f.InReview},
		Done:    f.Done, WorkedHours: f.WorkedHours, AverageCycleHours: f.AverageCycleHours,
	}
}

func toAuditRecord(e audit.Entry) AuditRecord {
	out := AuditRecord{
		Id: uuid.MustParse(e.ID), Action: e.Action, EntityType: e.EntityType, EntityId: e.EntityID, Detail: e.Detail, CreatedAt: e.CreatedAt,
	}
	if e.MemberID != "" {
		out.MemberId = ids.Optional(&e.MemberID)
	}
	return out
}
