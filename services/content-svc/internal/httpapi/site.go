package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/content-svc/internal/site"
)

// Site is what the handlers need of the site service.
type Site interface {
	Blogs(ctx context.Context, q string, p paging.Page) ([]site.Blog, paging.Meta, error)
	Blog(ctx context.Context, slug string) (site.Blog, error)
	CreateBlog(ctx context.Context, b site.Blog) (site.Blog, error)
	DeleteBlog(ctx context.Context, slug string) error
	CreateComment(ctx context.Context, c site.Comment) (site.Comment, error)
	Comments(ctx context.Context, t site.Target, p paging.Page) ([]site.Comment, paging.Meta, error)
	PendingComments(ctx context.Context, p paging.Page) ([]site.Comment, paging.Meta, error)
	Approve(ctx context.Context, id string) (site.Comment, error)
	Reject(ctx context.Context, id string) (site.Comment, error)
	Slides(ctx context.Context) ([]site.Slide, error)
	CreateSlide(ctx context.Context, s site.Slide) (site.Slide, error)
	DeleteSlide(ctx context.Context, id string) error
	HomeEvents(ctx context.Context) ([]site.HomeEvent, error)
	CreateHomeEvent(ctx context.Context, e site.HomeEvent) (site.HomeEvent, error)
	DeleteHomeEvent(ctx context.Context, id string) error
	PublicSettings(ctx context.Context, tenantID string) (map[string]any, error)
	Settings(ctx context.Context, tenantID string) (site.Settings, error)
	PutSettings(ctx context.Context, tenantID string, s site.Settings) (site.Settings, error)
}

func toBlog(b site.Blog) Blog {
	return Blog{
		Id: parseID(b.ID), Slug: b.Slug, Title: b.Title, Excerpt: b.Excerpt, Body: b.Body, CoverImage: b.CoverImage,
		AuthorName: b.AuthorName, IsPublished: b.IsPublished, PublishedAt: b.PublishedAt, CreatedAt: b.CreatedAt,
	}
}

func toComment(c site.Comment) Comment {
	return Comment{
		Id: parseID(c.ID), Content: c.Content, Rate: c.Rate, BlogId: optionalID(c.BlogID), ContainerId: optionalID(c.ContainerID),
		ParentCommentId: optionalID(c.ParentCommentID), AuthorId: c.AuthorID, Status: CommentStatus(c.Status), CreatedAt: c.CreatedAt,
	}
}

func toCommentPage(cs []site.Comment, meta paging.Meta) CommentPage {
	data := make([]Comment, len(cs))
	for i, cm := range cs {
		data[i] = toComment(cm)
	}
	return CommentPage{Data: data, Meta: toMeta(meta)}
}

func toSlide(s site.Slide) Slide {
	return Slide{
		Id: parseID(s.ID), Title: s.Title, Subtitle: s.Subtitle, ImageUrl: s.ImageURL, LinkUrl: s.LinkURL,
		Position: s.Position, IsActive: s.IsActive, CreatedAt: s.CreatedAt,
	}
}

func toHomeEvent(e site.HomeEvent) HomeEvent {
	return HomeEvent{
		Id: parseID(e.ID), Title: e.Title, Description: e.Description, ImageUrl: e.ImageURL, LinkUrl: e.LinkURL,
		StartsAt: e.StartsAt, EndsAt: e.EndsAt, Position: e.Position, CreatedAt: e.CreatedAt,
	}
}

// tenantOf is the tenant a settings call is about: the tenant_id parameter, or the caller's.
func tenantOf(c echo.Context, param *openapi_types.UUID) string {
	if param != nil {
		return param.String()
	}
	if cl := authn.FromContext(c); cl != nil {
		return cl.TenantID
	}
	return ""
}

// ListBlogs answers one page of published posts.
func (h *Handler) ListBlogs(c echo.Context, params ListBlogsParams) error {
	p, err := paging.New(params.Page, params.PageSize)
	if err != nil {
		return err
	}
	blogs, meta, err := h.site.Blogs(c.Request().Context(), deref(params.Q, ""), p)
	if err != nil {
		return err
	}
	data := make([]Blog, len(blogs))
	for i, b := range blogs {
		data[i] = toBlog(b)
	}
	return c.JSON(http.StatusOK, BlogPage{Data: data, Meta: toMeta(meta)})
}

// GetBlog answers a published post.
func (h *Handler) GetBlog(c echo.Context, slug string) error {
	b, err := h.site.Blog(c.Request().Context(), slug)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toBlog(b))
}

// CreateBlog writes a post.
func (h *Handler) CreateBlog(c echo.Context) error {
	var in BlogCreate
	if err := httpx.Bind(c, &in); err != nil {
		return err
	}
	b, err := h.site.CreateBlog(c.Request().Context(), site.Blog{
		Slug: in.Slug, Title: in.Title, Excerpt: deref(in.Excerpt, ""), Body: in.Body, CoverImage: deref(in.CoverImage, ""),
		AuthorName: deref(in.AuthorName, ""), IsPublished: deref(in.IsPublished, true),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toBlog(b))
}

// DeleteBlog removes a post.
func (h *Handler) DeleteBlog(c echo.Context, slug string) error {
	if err := h.site.DeleteBlog(c.Request().Context(), slug); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ListComments answers approved comments of one target.
func (h *Handler) ListComments(c echo.Context, params ListCommentsParams) error {
	p, err := paging.New(params.Page, params.PageSize)
	if err != nil {
		return err
	}
	cs, meta, err := h.site.Comments(c.Request().Context(), site.Target{BlogID: idString(params.BlogId), ContainerID: idString(params.ContainerId)}, p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toCommentPage(cs, meta))
}

// CreateComment records a comment pending approval.
func (h *Handler) CreateComment(c echo.Context) error {
	var in CommentCreate
	if err := httpx.Bind(c, &in); err != nil {
		return err
	}
	cm, err := h.site.CreateComment(c.Request().Context(), site.Comment{
		Content: in.Content, Rate: in.Rate, BlogID: idString(in.BlogId), ContainerID: idString(in.ContainerId),
		ParentCommentID: idString(in.ParentCommentId), AuthorID: authn.FromContext(c).Subject,
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toComment(cm))
}

// ListPendingComments answers the moderation queue.
func (h *Handler) ListPendingComments(c echo.Context, params ListPendingCommentsParams) error {
	p, err := paging.New(params.Page, params.PageSize)
	if err != nil {
		return err
	}
	cs, meta, err := h.site.PendingComments(c.Request().Context(), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toCommentPage(cs, meta))
}

// ApproveComment publishes a pending comment.
func (h *Handler) ApproveComment(c echo.Context, id openapi_types.UUID) error {
	cm, err := h.site.Approve(c.Request().Context(), id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toComment(cm))
}

// RejectComment refuses a pending comment.
func (h *Handler) RejectComment(c echo.Context, id openapi_types.UUID) error {
	cm, err := h.site.Reject(c.Request().Context(), id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toComment(cm))
}

// ListSlides answers the active slides.
func (h *Handler) ListSlides(c echo.Context) error {
	slides, err := h.site.Slides(c.Request().Context())
	if err != nil {
		return err
	}
	data := make([]Slide, len(slides))
	for i, s := range slides {
		data[i] = toSlide(s)
	}
	return c.JSON(http.StatusOK, SlideList{Data: data})
}

// CreateSlide adds a slide.
func (h *Handler) CreateSlide(c echo.Context) error {
	var in SlideCreate
	if err := httpx.Bind(c, &in); err != nil {
		return err
	}
	s, err := h.site.CreateSlide(c.Request().Context(), site.Slide{
		Title: in.Title, Subtitle: deref(in.Subtitle, ""), ImageURL: in.ImageUrl, LinkURL: deref(in.LinkUrl, ""),
		Position: deref(in.Position, 0), IsActive: deref(in.IsActive, true),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toSlide(s))
}

// DeleteSlide removes a slide.
func (h *Handler) DeleteSlide(c echo.Context, id openapi_types.UUID) error {
	if err := h.site.DeleteSlide(c.Request().Context(), id.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ListHomeEvents answers the events that have not ended.
func (h *Handler) ListHomeEvents(c echo.Context) error {
	events, err := h.site.HomeEvents(c.Request().Context())
	if err != nil {
		return err
	}
	data := make([]HomeEvent, len(events))
	for i, e := range events {
		data[i] = toHomeEvent(e)
	}
	return c.JSON(http.StatusOK, HomeEventList{Data: data})
}

// CreateHomeEvent adds an event.
func (h *Handler) CreateHomeEvent(c echo.Context) error {
	var in HomeEventCreate
	if err := httpx.Bind(c, &in); err != nil {
		return err
	}
	var ends *time.Time
	if in.EndsAt != nil {
		t := in.EndsAt.UTC()
		ends = &t
	}
	e, err := h.site.CreateHomeEvent(c.Request().Context(), site.HomeEvent{
		Title: in.Title, Description: deref(in.Description, ""), ImageURL: deref(in.ImageUrl, ""), LinkURL: deref(in.LinkUrl, ""),
		StartsAt: in.StartsAt.UTC(), EndsAt: ends, Position: deref(in.Position, 0),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toHomeEvent(e))
}

// DeleteHomeEvent removes an event.
func (h *Handler) DeleteHomeEvent(c echo.Context, id openapi_types.UUID) error {
	if err := h.site.DeleteHomeEvent(c.Request().Context(), id.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// GetPublicSettings answers the public part of a tenant's settings.
func (h *Handler) GetPublicSettings(c echo.Context, params GetPublicSettingsParams) error {
	pub, err := h.site.PublicSettings(c.Request().Context(), tenantOf(c, params.TenantId))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pub)
}

// GetSettings answers a tenant's whole settings.
func (h *Handler) GetSettings(c echo.Context, params GetSettingsParams) error {
	st, err := h.site.Settings(c.Request().Context(), tenantOf(c, params.TenantId))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, Settings{Public: st.Public, Private: st.Private})
}

// PutSettings replaces a tenant's whole settings.
func (h *Handler) PutSettings(c echo.Context, params PutSettingsParams) error {
	var in Settings
	if err := httpx.Bind(c, &in); err != nil {
		return err
	}
	st, err := h.site.PutSettings(c.Request().Context(), tenantOf(c, params.TenantId), site.Settings{Public: in.Public, Private: in.Private})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, Settings{Public: st.Public, Private: st.Private})
}
