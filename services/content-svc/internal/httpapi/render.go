package httpapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/content-svc/internal/render"
)

// RenderServers is what the handlers need of the render-server service.
type RenderServers interface {
	Servers(ctx context.Context) ([]render.Server, error)
	Server(ctx context.Context, id string) (render.Server, error)
	Create(ctx context.Context, s render.Server) (render.Server, error)
	Update(ctx context.Context, id string, c render.Change) (render.Server, error)
	Delete(ctx context.Context, id string) error
}

func toProjectServer(s render.Server) ProjectServer {
	return ProjectServer{
		Id: parseID(s.ID), Name: s.Name, BaseUrl: s.BaseURL, Region: s.Region, IsActive: s.IsActive,
		MaxParallelRenders: s.MaxParallelRenders, CreatedAt: s.CreatedAt,
	}
}

func (h *Handler) serverList(c echo.Context) error {
	servers, err := h.render.Servers(c.Request().Context())
	if err != nil {
		return err
	}
	data := make([]ProjectServer, len(servers))
	for i, s := range servers {
		data[i] = toProjectServer(s)
	}
	return c.JSON(http.StatusOK, ProjectServerList{Data: data})
}

// ListProjectServers answers every render server to a service.
func (h *Handler) ListProjectServers(c echo.Context) error { return h.serverList(c) }

// ListProjectServersAdmin answers every render server to an administrator.
func (h *Handler) ListProjectServersAdmin(c echo.Context) error { return h.serverList(c) }

// GetProjectServer answers one render server.
func (h *Handler) GetProjectServer(c echo.Context, id openapi_types.UUID) error {
	s, err := h.render.Server(c.Request().Context(), id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toProjectServer(s))
}

// CreateProjectServer registers a render server.
func (h *Handler) CreateProjectServer(c echo.Context) error {
	var in ProjectServerCreate
	if err := httpx.Bind(c, &in); err != nil {
		return err
	}
	s, err := h.render.Create(c.Request().Context(), render.Server{
		Name: in.Name, BaseURL: in.BaseUrl, Region: deref(in.Region, ""), IsActive: deref(in.IsActive, true),
		MaxParallelRenders: deref(in.MaxParallelRenders, 1),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toProjectServer(s))
}

// UpdateProjectServer changes the given fields of a render server.
func (h *Handler) UpdateProjectServer(c echo.Context, id openapi_types.UUID) error {
	var in ProjectServerUpdate
	if err := httpx.Bind(c, &in); err != nil {
		return err
	}
	s, err := h.render.Update(c.Request().Context(), id.String(), render.Change{
		Name: in.Name, BaseURL: in.BaseUrl, Region: in.Region, IsActive: in.IsActive, MaxParallelRenders: in.MaxParallelRenders,
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toProjectServer(s))
}

// DeleteProjectServer removes a render server.
func (h *Handler) DeleteProjectServer(c echo.Context, id openapi_types.UUID) error {
	if err := h.render.Delete(c.Request().Context(), id.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
