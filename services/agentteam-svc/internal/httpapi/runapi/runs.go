package runapi

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/ids"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// CreateRun queues a run, or answers the active one.
func (h *Handler) CreateRun(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req CreateRunRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	r, err := h.runs.Create(c.Request().Context(), member, req.SeatId.String(), req.WorkItemId.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAgentRun(r))
}

// GetRun answers a run.
func (h *Handler) GetRun(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	r, err := h.runs.Get(c.Request().Context(), member, id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAgentRun(r))
}

// ListRuns answers the runs of a work item or a seat.
func (h *Handler) ListRuns(c echo.Context, params ListRunsParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.runs.List(c.Request().Context(), member, ids.OptionalString(params.WorkItemId), ids.OptionalString(params.SeatId), p)
	if err != nil {
		return err
	}
	out := make([]AgentRun, len(list))
	for i, r := range list {
		out[i] = toAgentRun(r)
	}
	return c.JSON(http.StatusOK, out)
}

// CancelRun cancels a queued or running run.
func (h *Handler) CancelRun(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	r, err := h.runs.Cancel(c.Request().Context(), member, id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAgentRun(r))
}

// ListRunSteps answers a page of the run's transcript.
func (h *Handler) ListRunSteps(c echo.Context, id openapi_types.UUID, params ListRunStepsParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	steps, err := h.runs.Steps(c.Request().Context(), member, id.String(), p)
	if err != nil {
		return err
	}
	out := make([]RunStep, len(steps))
	for i, s := range steps {
		out[i] = toRunStep(s)
	}
	return c.JSON(http.StatusOK, out)
}

func toRunStep(s run.Step) RunStep {
	return RunStep{
		Seq: s.Seq, Kind: RunStepKind(s.Kind), ConnectionId: ids.Optional(s.ConnectionID), PromptTokens: s.PromptTokens,
		CompletionTokens: s.CompletionTokens, AskedForTools: s.AskedForTools, CallId: s.CallID, McpServerId: ids.Optional(s.MCPServerID),
		ToolName: s.ToolName, FunctionName: s.FunctionName, Arguments: s.Arguments, Risk: s.Risk, Status: s.Status, Result: s.Result,
		DurationMs: s.Duration.Milliseconds(), CreatedAt: s.CreatedAt,
	}
}

func toAgentRun(r run.Run) AgentRun {
	skipped := make([]SkippedMcpServer, len(r.SkippedMCPServers))
	for i, s := range r.SkippedMCPServers {
		skipped[i] = SkippedMcpServer{Id: s.ID, Name: s.Name, Reason: s.Reason}
	}
	return AgentRun{
		Id: uuid.MustParse(r.ID), SeatId: uuid.MustParse(r.SeatID), WorkItemId: uuid.MustParse(r.WorkItemID),
		AgentId: ids.Optional(r.AgentID), Status: AgentRunStatus(r.Status), ActionType: r.ActionType, ActionRisk: r.ActionRisk,
		Prompt: r.Prompt, Output: r.Output, Error: r.Error, ErrorCode: r.ErrorCode, Attempts: r.Attempts,
		ConnectionId: ids.Optional(r.ConnectionID), PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens,
		SkippedMcpServers: skipped, CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
	}
}
