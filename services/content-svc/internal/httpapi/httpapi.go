// Package httpapi is content-svc's HTTP adapter: the handlers of the generated server
// interface, request validation and mapping between wire and domain types.
package httpapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/content-svc/api"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
	"github.com/motionstudio/platform/services/content-svc/internal/render"
)

// Catalog is what the handlers need of the catalog service.
type Catalog interface {
	Tags(ctx context.Context) ([]catalog.Tag, error)
}

// RenderServers is what the handlers need of the render-server service.
type RenderServers interface {
	Servers(ctx context.Context) ([]render.Server, error)
}

// Handler implements ServerInterface.
type Handler struct {
	catalog Catalog
	render  RenderServers
}

// NewHandler returns a Handler.
func NewHandler(c Catalog, r RenderServers) *Handler { return &Handler{catalog: c, render: r} }

// Register mounts every operation of the OpenAPI document on e with its access policy.
func Register(e *echo.Echo, h *Handler, v *authn.Verifier) error {
	policies := httpx.Policies{
		"listTags":           httpx.Allow(v.UserOrService()),
		"listProjectServers": httpx.Allow(v.RequireService()),
	}
	if err := policies.Verify(api.OpenAPI); err != nil {
		return err
	}
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
	return nil
}

// ListTags answers every tag.
func (h *Handler) ListTags(c echo.Context) error {
	tags, err := h.catalog.Tags(c.Request().Context())
	if err != nil {
		return err
	}
	data := make([]Tag, len(tags))
	for i, t := range tags {
		data[i] = toTagResponse(t)
	}
	return c.JSON(http.StatusOK, TagList{Data: data})
}

func toTagResponse(t catalog.Tag) Tag {
	return Tag{Id: uuid.MustParse(t.ID), Slug: t.Slug, Name: t.Name}
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
