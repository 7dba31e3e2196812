// Package catalogapi is content-svc's HTTP adapter for the catalog and the editor graph
// (operations tagged Templates, Containers, Projects, Scenes, Elements, Presets, Categories,
// Tags and Favorites).
package catalogapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// Catalog is what the handlers need of the catalog service.
type Catalog interface {
	Tags(ctx context.Context) ([]catalog.Tag, error)
}

// Handler implements ServerInterface.
type Handler struct {
	catalog Catalog
}

// NewHandler returns a Handler.
func NewHandler(c Catalog) *Handler { return &Handler{catalog: c} }

// Policies says who may call each operation of this package.
func Policies(v *authn.Verifier) httpx.Policies {
	return httpx.Policies{
		"listTags": httpx.Allow(v.UserOrService()),
	}
}

// Register mounts this package's operations on e with the service's merged policies.
func Register(e *echo.Echo, h *Handler, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// ListTags answers every tag.
func (h *Handler) ListTags(c echo.Context) error {
	tags, err := h.catalog.Tags(c.Request().Context())
	if err != nil {
		return err
	}
	data := make([]Tag, len(tags))
	for i, t := range tags {
		data[i] = Tag{Id: uuid.MustParse(t.ID), Slug: t.Slug, Name: t.Name}
	}
	return c.JSON(http.StatusOK, TagList{Data: data})
}
