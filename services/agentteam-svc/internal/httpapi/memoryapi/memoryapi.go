// Package memoryapi is agentteam-svc's HTTP adapter for team memory, run approval and
// governance analytics (tag Memory).
package memoryapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// Memory is what the handlers need of the memory service.
type Memory interface {
	Create(ctx context.Context, memberID, teamID string, kind memory.Kind, content string) (memory.Entry, error)
	List(ctx context.Context, memberID, teamID string, p org.Page) ([]memory.Entry, error)
	Delete(ctx context.Context, memberID, id string) (memory.Entry, error)
	Search(ctx context.Context, memberID, teamID, q string, limit int) ([]memory.Hit, error)
	Approve(ctx context.Context, memberID, runID string, edited *string) (memory.Entry, error)
	Analytics(ctx context.Context, memberID, organizationID, teamID string) (memory.Analytics, error)
}

// Handler implements ServerInterface.
type Handler struct{ memory Memory }

// NewHandler returns a Handler.
func NewHandler(m Memory) *Handler { return &Handler{memory: m} }

// Policies says who may call each operation of this package: members only, the domain checks
// their capabilities.
func Policies(v *authn.Verifier) httpx.Policies {
	user := httpx.Allow(v.RequireUser())
	return httpx.Policies{
		"createMemoryEntry": user,
		"listMemoryEntries": user,
		"deleteMemoryEntry": user,
		"searchMemory":      user,
		"approveRun":        user,
		"getAnalytics":      user,
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// CreateMemoryEntry writes an entry into a team's memory.
func (h *Handler) CreateMemoryEntry(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req CreateMemoryEntryRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	e, err := h.memory.Create(c.Request().Context(), member, req.TeamId.String(), memory.Kind(req.Kind), req.Content)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toMemoryEntry(e))
}

// ListMemoryEntries answers a team's entries, newest first.
func (h *Handler) ListMemoryEntries(c echo.Context, params ListMemoryEntriesParams) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	offset, limit, err := caller.Page(params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.memory.List(c.Request().Context(), member, params.TeamId.String(), org.Page{Offset: offset, Limit: limit})
	if err != nil {
		return err
	}
	out := make([]MemoryEntry, len(list))
	for i, e := range list {
		out[i] = toMemoryEntry(e)
	}
	return c.JSON(http.StatusOK, out)
}

// DeleteMemoryEntry deletes an entry and answers it as it was.
func (h *Handler) DeleteMemoryEntry(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	e, err := h.memory.Delete(c.Request().Context(), member, id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toMemoryEntry(e))
}

// SearchMemory answers the team's entries most similar to the query.
func (h *Handler) SearchMemory(c echo.Context, params SearchMemoryParams) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	limit := memory.DefaultSearchLimit
	if params.Limit != nil {
		limit = *params.Limit
	}
	hits, err := h.memory.Search(c.Request().Context(), member, params.TeamId.String(), params.Q, limit)
	if err != nil {
		return err
	}
	out := make([]MemorySearchHit, len(hits))
	for i, hit := range hits {
		out[i] = MemorySearchHit{Entry: toMemoryEntry(hit.Entry), Score: hit.Score}
	}
	return c.JSON(http.StatusOK, out)
}

// ApproveRun stores a completed run's output, or the reviewer's edit of it, in team memory.
func (h *Handler) ApproveRun(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req ApproveRunRequest
	if err := httpx.BindOptional(c, &req); err != nil {
		return err
	}
	e, err := h.memory.Approve(c.Request().Context(), member, id.String(), req.EditedOutput)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toMemoryEntry(e))
}

// GetAnalytics answers the governance figures of an organization or one of its teams.
func (h *Handler) GetAnalytics(c echo.Context, params GetAnalyticsParams) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	teamID := ""
	if params.TeamId != nil {
		teamID = params.TeamId.String()
	}
	a, err := h.memory.Analytics(c.Request().Context(), member, params.OrganizationId.String(), teamID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAnalytics(a))
}

func toMemoryEntry(e memory.Entry) MemoryEntry {
	out := MemoryEntry{
		Id: uuid.MustParse(e.ID), TeamId: uuid.MustParse(e.TeamID), Kind: MemoryKind(e.Kind), Content: e.Content,
		RunId: toUUID(e.RunID), AgentId: toUUID(e.AgentID), EditDistance: e.EditDistance, CreatedAt: e.CreatedAt,
	}
	if e.CreatedBy != "" {
		out.CreatedBy = toUUID(&e.CreatedBy)
	}
	return out
}

func toUUID(s *string) *openapi_types.UUID {
	if s == nil {
		return nil
	}
	id := uuid.MustParse(*s)
	return &id
}

func toAnalytics(a memory.Analytics) Analytics {
	out := Analytics{
		OrganizationId: uuid.MustParse(a.OrganizationID), Approvals: a.Approvals, Corrections: a.Corrections,
		ApprovalRate: a.ApprovalRate(), AverageEditDistance: a.AverageEditDistance(), TasksDone: a.TasksDone,
		TokensUsed: a.TokensUsed, Agents: make([]AgentAnalytics, len(a.Agents)),
	}
	if a.TeamID != "" {
		out.TeamId = toUUID(&a.TeamID)
	}
	for i, f := range a.Agents {
		trend := make([]EditDistanceWeek, len(f.Trend))
		for j, w := range f.Trend {
			trend[j] = EditDistanceWeek{WeekStart: openapi_types.Date{Time: w.Start}, AverageEditDistance: *w.AverageEditDistance(), Reviews: w.Total()}
		}
		out.Agents[i] = AgentAnalytics{
			AgentId: uuid.MustParse(f.AgentID), Runs: f.Runs, Completed: f.Completed, Failed: f.Failed,
			Approvals: f.Approvals, Corrections: f.Corrections, AverageEditDistance: f.AverageEditDistance(),
			EditDistanceTrend: trend, TokensUsed: f.TokensUsed,
		}
	}
	return out
}
