// Package connapi is agentteam-svc's HTTP adapter for model connections and MCP servers (tag
// Connections). No answer carries a key or a header value.
package connapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// Connections is what the handlers need of the connection service.
type Connections interface {
	CreateModel(ctx context.Context, memberID string, in connection.NewModel) (connection.Model, error)
	Models(ctx context.Context, memberID, organizationID string, p org.Page) ([]connection.Model, error)
	DeleteModel(ctx context.Context, memberID, id string) (connection.Model, error)
	CreateMCPServer(ctx context.Context, memberID string, in connection.NewMCPServer) (connection.MCPServer, error)
	MCPServers(ctx context.Context, memberID, organizationID string, p org.Page) ([]connection.MCPServer, error)
	DeleteMCPServer(ctx context.Context, memberID, id string) (connection.MCPServer, error)
	TestMCPServer(ctx context.Context, memberID, id string) (connection.TestResult, error)
}

// Handler implements ServerInterface.
type Handler struct{ conns Connections }

// NewHandler returns a Handler.
func NewHandler(conns Connections) *Handler { return &Handler{conns: conns} }

// Policies says who may call each operation of this package: members only, the domain checks
// their capabilities.
func Policies(v *authn.Verifier) httpx.Policies {
	user := httpx.Allow(v.RequireUser())
	return httpx.Policies{
		"createModelConnection": user,
		"listModelConnections":  user,
		"deleteModelConnection": user,
		"createMcpServer":       user,
		"listMcpServers":        user,
		"deleteMcpServer":       user,
		"testMcpServer":         user,
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// CreateModelConnection registers a model connection.
func (h *Handler) CreateModelConnection(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req CreateModelConnectionRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	m, err := h.conns.CreateModel(c.Request().Context(), member, connection.NewModel{
		OrganizationID: req.OrganizationId.String(), Name: req.Name, BaseURL: req.BaseUrl, Model: req.Model, APIKey: req.ApiKey,
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toModelConnection(m))
}

// ListModelConnections answers the organization's model connections.
func (h *Handler) ListModelConnections(c echo.Context, params ListModelConnectionsParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.conns.Models(c.Request().Context(), member, params.OrganizationId.String(), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapAll(list, toModelConnection))
}

// DeleteModelConnection deletes a model connection and answers it.
func (h *Handler) DeleteModelConnection(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	m, err := h.conns.DeleteModel(c.Request().Context(), member, id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toModelConnection(m))
}

// CreateMcpServer registers an MCP server.
func (h *Handler) CreateMcpServer(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req CreateMcpServerRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	in := connection.NewMCPServer{OrganizationID: req.OrganizationId.String(), Name: req.Name, URL: req.Url}
	if req.Headers != nil {
		in.Headers = *req.Headers
	}
	s, err := h.conns.CreateMCPServer(c.Request().Context(), member, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toMcpServer(s))
}

// ListMcpServers answers the organization's MCP servers.
func (h *Handler) ListMcpServers(c echo.Context, params ListMcpServersParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.conns.MCPServers(c.Request().Context(), member, params.OrganizationId.String(), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapAll(list, toMcpServer))
}

// DeleteMcpServer deletes an MCP server and answers it.
func (h *Handler) DeleteMcpServer(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	s, err := h.conns.DeleteMCPServer(c.Request().Context(), member, id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toMcpServer(s))
}

// TestMcpServer checks that the MCP server answers and lists its tools.
func (h *Handler) TestMcpServer(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	r, err := h.conns.TestMCPServer(c.Request().Context(), member, id.String())
	if err != nil {
		return err
	}
	out := McpServerTest{Reachable: r.Reachable, Tools: r.Tools}
	if r.Error != "" {
		out.Error = &r.Error
	}
	return c.JSON(http.StatusOK, out)
}

func mapAll[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func toModelConnection(m connection.Model) ModelConnection {
	return ModelConnection{
		Id: uuid.MustParse(m.ID), OrganizationId: uuid.MustParse(m.OrganizationID), Name: m.Name, BaseUrl: m.BaseURL,
		Model: m.Model, ApiKeyLast4: m.APIKeyLast4, CreatedAt: m.CreatedAt,
	}
}

func toMcpServer(s connection.MCPServer) McpServer {
	names := s.HeaderNames
	if names == nil {
		names = []string{}
	}
	return McpServer{
		Id: uuid.MustParse(s.ID), OrganizationId: uuid.MustParse(s.OrganizationID), Name: s.Name, Url: s.URL,
		HeaderNames: names, CreatedAt: s.CreatedAt,
	}
}
