package catalogapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// ListTags answers every tag.
func (h *Handler) ListTags(c echo.Context) error {
	tags, err := h.catalog.Tags(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, TagList{Data: mapAll(tags, toTag)})
}

// CreateTag creates a tag.
func (h *Handler) CreateTag(c echo.Context) error {
	var body TagCreate
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	t, err := h.catalog.CreateTag(c.Request().Context(), deref(body.Slug), body.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toTag(t))
}

// ListCategories answers every category.
func (h *Handler) ListCategories(c echo.Context) error {
	cats, err := h.catalog.Categories(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, CategoryList{Data: mapAll(cats, toCategory)})
}

// CreateCategory creates a category.
func (h *Handler) CreateCategory(c echo.Context) error {
	var body CategoryCreate
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	in := catalog.Category{Slug: deref(body.Slug), Name: body.Name, Description: deref(body.Description),
		Image: deref(body.Image), Position: deref(body.Position)}
	cat, err := h.catalog.CreateCategory(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toCategory(cat))
}

// CreateContainer creates an unpublished container.
func (h *Handler) CreateContainer(c echo.Context) error {
	var b ContainerCreate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	f := catalog.ContainerFields{Slug: &b.Slug, Name: &b.Name, PrimaryMode: &b.PrimaryMode, Description: b.Description,
		Keywords: b.Keywords, NewsText: b.NewsText, Image: b.Image, Demo: b.Demo, FullDemo: b.FullDemo,
		MiniDemo: b.MiniDemo, IsPremium: b.IsPremium, IsMockup: b.IsMockup,
		CategoryIDs: idStrings(b.CategoryIds), TagIDs: idStrings(b.TagIds)}
	ct, err := h.catalog.CreateContainer(c.Request().Context(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toContainer(ct))
}

// UpdateContainer changes the given fields of a container.
func (h *Handler) UpdateContainer(c echo.Context, id openapi_types.UUID) error {
	var b ContainerUpdate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	f := catalog.ContainerFields{Slug: b.Slug, Name: b.Name, PrimaryMode: b.PrimaryMode, Description: b.Description,
		Keywords: b.Keywords, NewsText: b.NewsText, Image: b.Image, Demo: b.Demo, FullDemo: b.FullDemo,
		MiniDemo: b.MiniDemo, IsPremium: b.IsPremium, IsMockup: b.IsMockup,
		CategoryIDs: idStrings(b.CategoryIds), TagIDs: idStrings(b.TagIds)}
	ct, err := h.catalog.UpdateContainer(c.Request().Context(), id.String(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toContainer(ct))
}

// DeleteContainer soft-deletes a container.
func (h *Handler) DeleteContainer(c echo.Context, id openapi_types.UUID) error {
	if err := h.catalog.DeleteContainer(c.Request().Context(), id.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// PublishContainer publishes a container.
func (h *Handler) PublishContainer(c echo.Context, id openapi_types.UUID) error {
	if err := h.catalog.Publish(c.Request().Context(), id.String(), actor(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// UnpublishContainer unpublishes a container with an optional reason; the body may be absent.
func (h *Handler) UnpublishContainer(c echo.Context, id openapi_types.UUID) error {
	var b UnpublishRequest
	if err := httpx.BindOptional(c, &b); err != nil {
		return err
	}
	if err := h.catalog.Unpublish(c.Request().Context(), id.String(), deref(b.Reason), actor(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ListTemplates answers one page of the catalog.
func (h *Handler) ListTemplates(c echo.Context, p ListTemplatesParams) error {
	f := catalog.TemplateFilter{Q: deref(p.Q), Mode: deref(p.Mode), Aspect: string(deref(p.Aspect)),
		IsPremium: p.IsPremium, Sort: string(deref(p.Sort)), Page: p.Page, PageSize: p.PageSize}
	if p.CategoryId != nil {
		f.CategoryID = p.CategoryId.String()
	}
	if ids := idStrings(p.TagIds); ids != nil {
		f.TagIDs = *ids
	}
	page, err := h.catalog.Templates(c.Request().Context(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, TemplateCardPage{Data: mapAll(page.Cards, toTemplateCard), Meta: PaginationMeta{
		Page: page.Page, PageSize: page.PageSize, Total: page.Total, HasMore: page.HasMore}})
}

// GetTemplate answers a template by slug or id.
func (h *Handler) GetTemplate(c echo.Context, slugOrID string) error {
	d, err := h.catalog.Template(c.Request().Context(), slugOrID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, TemplateDetail{Container: toContainer(d.Container), Projects: mapAll(d.Projects, toProjectSummary),
		Categories: mapAll(d.Categories, toCategory), Tags: mapAll(d.Tags, toTag)})
}

// ListTemplateProjects answers a template's published projects.
func (h *Handler) ListTemplateProjects(c echo.Context, id openapi_types.UUID) error {
	ps, err := h.catalog.TemplateProjects(c.Request().Context(), id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ProjectSummaryList{Data: mapAll(ps, toProjectSummary)})
}

// ListRelatedTemplates answers templates related to one.
func (h *Handler) ListRelatedTemplates(c echo.Context, id openapi_types.UUID, p ListRelatedTemplatesParams) error {
	cards, err := h.catalog.RelatedTemplates(c.Request().Context(), id.String(), p.Limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, TemplateCardList{Data: mapAll(cards, toTemplateCard)})
}

// CreateProject creates a project.
func (h *Handler) CreateProject(c echo.Context) error {
	var b ProjectCreate
	fields, err := bindBody(c, &b)
	if err != nil {
		return err
	}
	if err := requirePresent(fields, "container_id", "name", "original_width", "original_height", "project_duration_sec",
		"choose_mode"); err != nil {
		return err
	}
	containerID := requiredID(b.ContainerId)
	f := catalog.ProjectFields{ContainerID: &containerID, Name: &b.Name, OriginalWidth: &b.OriginalWidth,
		OriginalHeight: &b.OriginalHeight, ProjectDurationSec: &b.ProjectDurationSec, ChooseMode: &b.ChooseMode,
		Aspect: (*string)(b.Aspect), MinDurationSec: b.MinDurationSec, MaxDurationSec: b.MaxDurationSec,
		Resolution: b.Resolution, FreeFPS: b.FreeFps, VIPFactor: b.VipFactor, RenderAEPComp: b.RenderAepComp,
		ProjectServerID: idString(b.ProjectServerId), Description: b.Description, Image: b.Image,
		FullDemo: b.FullDemo, DownloadLink: b.DownloadLink, IsPublished: b.IsPublished}
	p, err := h.catalog.CreateProject(c.Request().Context(), f)
	if err != nil {
		return err
	}
	return h.respondProject(c, http.StatusCreated, p)
}

// GetProject answers a project.
func (h *Handler) GetProject(c echo.Context, id openapi_types.UUID) error {
	p, err := h.catalog.Project(c.Request().Context(), id.String(), privileged(c))
	if err != nil {
		return err
	}
	return h.respondProject(c, http.StatusOK, p)
}

// UpdateProject changes the given fields of a project.
func (h *Handler) UpdateProject(c echo.Context, id openapi_types.UUID) error {
	var b ProjectUpdate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	server, unlink := patchID(b.ProjectServerId)
	f := catalog.ProjectFields{Name: b.Name, OriginalWidth: b.OriginalWidth, OriginalHeight: b.OriginalHeight,
		ProjectDurationSec: b.ProjectDurationSec, ChooseMode: b.ChooseMode, Aspect: (*string)(b.Aspect),
		MinDurationSec: b.MinDurationSec, MaxDurationSec: b.MaxDurationSec, Resolution: b.Resolution,
		FreeFPS: b.FreeFps, VIPFactor: b.VipFactor, RenderAEPComp: b.RenderAepComp,
		ProjectServerID: server, Description: b.Description, Image: b.Image,
		FullDemo: b.FullDemo, DownloadLink: b.DownloadLink, IsPublished: b.IsPublished, UnlinkProjectServer: unlink}
	p, err := h.catalog.UpdateProject(c.Request().Context(), id.String(), f)
	if err != nil {
		return err
	}
	return h.respondProject(c, http.StatusOK, p)
}

// DeleteProject deletes a project.
func (h *Handler) DeleteProject(c echo.Context, id openapi_types.UUID) error {
	if err := h.catalog.DeleteProject(c.Request().Context(), id.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
