package boardapi

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/ids"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/seat"
)

// CreateSeat opens a seat on a team.
func (h *Handler) CreateSeat(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req CreateSeatRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	st, err := h.seats.Create(c.Request().Context(), member, req.TeamId.String(), deref(req.RoleName))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSeat(st))
}

// ListSeats answers the team's seats.
func (h *Handler) ListSeats(c echo.Context, params ListSeatsParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.seats.List(c.Request().Context(), member, params.TeamId.String(), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapAll(list, toSeat))
}

// ConfigureAgent creates or replaces the seat's agent.
func (h *Handler) ConfigureAgent(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req ConfigureAgentRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	cfg, err := toAgentConfig(req)
	if err != nil {
		return err
	}
	a, err := h.seats.ConfigureAgent(c.Request().Context(), member, id.String(), cfg)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAgent(a))
}

// GetAgent answers the seat's agent.
func (h *Handler) GetAgent(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	a, err := h.seats.Agent(c.Request().Context(), member, id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAgent(a))
}

// toAgentConfig maps the request; apiConfigId is a string on the wire so that a blank one gets
// the spec's message, and a non-blank one must be a UUID.
func toAgentConfig(req ConfigureAgentRequest) (seat.AgentConfig, error) {
	apiConfig := deref(req.ApiConfigId)
	if !check.Blank(apiConfig) {
		u, err := uuid.Parse(apiConfig)
		if err != nil {
			return seat.AgentConfig{}, apperr.Invalidf("apiConfigId must be a UUID.")
		}
		apiConfig = u.String()
	}
	var mcp []string
	if req.McpServerIds != nil {
		mcp = mapAll(*req.McpServerIds, openapi_types.UUID.String)
	}
	return seat.AgentConfig{
		Name: deref(req.Name), Monogram: deref(req.Monogram), Autonomy: deref(req.Autonomy), APIConfigID: apiConfig,
		Persona: deref(req.Persona), FallbackAPIConfigID: ids.OptionalString(req.FallbackApiConfigId),
		SkillKeys: derefList(req.SkillKeys), Docs: derefList(req.Docs), MCPServerIDs: mcp,
		AgentProfileKey: req.AgentProfileKey, AgentProfileVersion: req.AgentProfileVersion, MonthlyTokenBudget: req.MonthlyTokenBudget,
	}, nil
}

func toSeat(s seat.Seat) Seat {
	return Seat{
		Id: uuid.MustParse(s.ID), TeamId: uuid.MustParse(s.TeamID), RoleName: s.RoleName, State: SeatState(s.State),
		MemberId: ids.Optional(s.MemberID), AgentId: ids.Optional(s.AgentID), CreatedAt: s.CreatedAt,
	}
}

func toAgent(a seat.Agent) Agent {
	return Agent{
		Id: uuid.MustParse(a.ID), SeatId: uuid.MustParse(a.SeatID), Name: a.Name, Monogram: a.Monogram, Autonomy: a.Autonomy,
		ApiConfigId: uuid.MustParse(a.APIConfigID), FallbackApiConfigId: ids.Optional(a.FallbackAPIConfigID),
		SkillKeys: a.SkillKeys, Docs: a.Docs, Persona: a.Persona, McpServerIds: mapAll(a.MCPServerIDs, uuid.MustParse),
		AgentProfileKey: a.AgentProfileKey, AgentProfileVersion: a.AgentProfileVersion, MonthlyTokenBudget: a.MonthlyTokenBudget,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	}
}
