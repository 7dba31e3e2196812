// Package httpapi is content-svc's HTTP adapter for files and site content (operations tagged
// Uploads, SvgPreviews, Media, Site and RenderServers). The catalog's operations live in the
// subpackage catalogapi, generated from the same api/openapi.yaml.
package httpapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/content-svc/internal/render"
)

// RenderServers is what the handlers need of the render-server service.
type RenderServers interface {
	Servers(ctx context.Context) ([]render.Server, error)
}

// Handler implements ServerInterface.
type Handler struct {
	render RenderServers
}

// NewHandler returns a Handler.
func NewHandler(r RenderServers) *Handler { return &Handler{render: r} }

// Policies says who may call each operation of this package.
func Policies(v *authn.Verifier) httpx.Policies {
	return httpx.Policies{
		"listProjectServers": httpx.Allow(v.RequireService()),
	}
}

// Register mounts this package's operations on e with the service's merged policies.
func Register(e *echo.Echo, h *Handler, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// ListProjectServers answers every render server.
func (h *Handler) ListProjectServers(c echo.Context) error {
	servers, err := h.render.Servers(c.Request().Context())
	if err != nil {
		return err
	}
	data := make([]ProjectServer, len(servers))
	for i, s := range servers {
		data[i] = ProjectServer{
			Id: uuid.MustParse(s.ID), Name: s.Name, BaseUrl: s.BaseURL, Region: s.Region, IsActive: s.IsActive,
			MaxParallelRenders: s.MaxParallelRenders, CreatedAt: s.CreatedAt,
		}
	}
	return c.JSON(http.StatusOK, ProjectServerList{Data: data})
}
