// Package site holds the website's content: blog posts, comments that wait for an
// administrator's approval, home-page slides and events, and each tenant's website settings.
package site

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/paging"
)

// Comment statuses.
const (
	Pending  = "pending"
	Approved = "approved"
	Rejected = "rejected"
)

// maxSettingsBytes bounds the encoded size of a tenant's settings.
const maxSettingsBytes = 64 << 10

// Blog is a blog post.
type Blog struct {
	ID          string
	Slug        string
	Title       string
	Excerpt     string
	Body        string
	CoverImage  string
	AuthorName  string
	IsPublished bool
	PublishedAt *time.Time
	CreatedAt   time.Time
}

// Comment is a comment on a blog post or on a template (container).
type Comment struct {
	ID              string
	Content         string
	Rate            *float64
	BlogID          string
	ContainerID     string
	ParentCommentID string
	AuthorID        string
	Status          string
	CreatedAt       time.Time
}

// Target names what comments are listed for: one of BlogID and ContainerID.
type Target struct {
	BlogID      string
	ContainerID string
}

// Slide is a home-page slide.
type Slide struct {
	ID        string
	Title     string
	Subtitle  string
	ImageURL  string
	LinkURL   string
	Position  int
	IsActive  bool
	CreatedAt time.Time
}

// HomeEvent is an event announced on the home page.
type HomeEvent struct {
	ID          string
	Title       string
	Description string
	ImageURL    string
	LinkURL     string
	StartsAt    time.Time
	EndsAt      *time.Time
	Position    int
	CreatedAt   time.Time
}

// Settings are a tenant's website settings: Public is answered to anyone, Private only to
// administrators.
type Settings struct {
	Public  map[string]any
	Private map[string]any
}

// Store persists the site's records.
type Store interface {
	Blogs(ctx context.Context, q string, p paging.Page) ([]Blog, int, error)
	PublishedBlog(ctx context.Context, slug string) (Blog, error)
	CreateBlog(ctx context.Context, b Blog) error
	DeleteBlog(ctx context.Context, slug string) error

	// CreateComment checks that the target (and the parent, on the same target) exists and
	// inserts c, returning NotFound otherwise.
	CreateComment(ctx context.Context, c Comment) error
	Comments(ctx context.Context, t Target, p paging.Page) ([]Comment, int, error)
	PendingComments(ctx context.Context, p paging.Page) ([]Comment, int, error)
	// DecideComment moves a pending comment to status; approving a rated comment on a
	// container recomputes the container's rating in the same transaction.
	DecideComment(ctx context.Context, id, status string) (Comment, error)

	Slides(ctx context.Context) ([]Slide, error)
	CreateSlide(ctx context.Context, s Slide) error
	DeleteSlide(ctx context.Context, id string) error

	HomeEvents(ctx context.Context, now time.Time) ([]HomeEvent, error)
	CreateHomeEvent(ctx context.Context, e HomeEvent) error
	DeleteHomeEvent(ctx context.Context, id string) error

	Settings(ctx context.Context, tenantID string) (Settings, error)
	PutSettings(ctx context.Context, tenantID string, s Settings) error
}

// Service implements the site rules.
type Service struct {
	store Store
	now   func() time.Time
	newID func() string
}

// NewService returns a Service; now tells the time and newID makes record ids (UUID v7 in
// production).
func NewService(store Store, now func() time.Time, newID func() string) *Service {
	return &Service{store: store, now: now, newID: newID}
}

// Blogs lists published posts, newest first or by relevance to q. It returns Invalid for a
// query over 200 characters.
func (s *Service) Blogs(ctx context.Context, q string, p paging.Page) ([]Blog, paging.Meta, error) {
	q = strings.TrimSpace(q)
	var c check.Checker
	c.Length("q", q, 0, 200)
	if err := c.Err(); err != nil {
		return nil, paging.Meta{}, err
	}
	blogs, total, err := s.store.Blogs(ctx, q, p)
	if err != nil {
		return nil, paging.Meta{}, err
	}
	return blogs, p.Meta(total), nil
}

// Blog returns a published post by slug. It returns NotFound when there is none.
func (s *Service) Blog(ctx context.Context, slug string) (Blog, error) {
	return s.store.PublishedBlog(ctx, slug)
}

// CreateBlog records a post. It returns Invalid for bad fields and Conflict for a taken slug.
func (s *Service) CreateBlog(ctx context.Context, b Blog) (Blog, error) {
	var c check.Checker
	c.Slug("slug", &b.Slug, 120)
	c.Length("title", b.Title, 1, 300)
	c.Length("excerpt", b.Excerpt, 0, 1000)
	c.Length("body", b.Body, 1, 200000)
	c.URL("cover_image", b.CoverImage, false)
	c.Length("author_name", b.AuthorName, 0, 200)
	if err := c.Err(); err != nil {
		return Blog{}, err
	}
	b.ID, b.CreatedAt = s.newID(), s.now().UTC()
	b.PublishedAt = nil
	if b.IsPublished {
		b.PublishedAt = &b.CreatedAt
	}
	if err := s.store.CreateBlog(ctx, b); err != nil {
		return Blog{}, err
	}
	return b, nil
}

// DeleteBlog removes a post and its comments. It returns NotFound for an unknown slug.
func (s *Service) DeleteBlog(ctx context.Context, slug string) error {
	return s.store.DeleteBlog(ctx, slug)
}

// CreateComment records a comment by author, pending approval, on a blog post, a template or,
// without either, the site in general. It returns Invalid for bad fields (two targets, a rate
// not on a template, a rate outside 1 to 5) and NotFound when the target or the parent
// comment does not exist.
func (s *Service) CreateComment(ctx context.Context, c Comment) (Comment, error) {
	c.Content = strings.TrimSpace(c.Content)
	var ck check.Checker
	ck.Length("content", c.Content, 1, 5000)
	if err := ck.Err(); err != nil {
		return Comment{}, err
	}
	if c.BlogID != "" && c.ContainerID != "" {
		return Comment{}, check.Invalid("blog_id", "at most one of blog_id and container_id may be given")
	}
	if c.Rate != nil {
		if c.ContainerID == "" {
			return Comment{}, check.Invalid("rate", "is only for comments on a template")
		}
		if *c.Rate < 1 || *c.Rate > 5 {
			return Comment{}, check.Invalid("rate", "must be between 1 and 5")
		}
	}
	c.ID, c.Status, c.CreatedAt = s.newID(), Pending, s.now().UTC()
	if err := s.store.CreateComment(ctx, c); err != nil {
		return Comment{}, err
	}
	return c, nil
}

// Comments lists the approved comments of one target, or without a target the site's general
// comments, oldest first. It returns Invalid when both of the target's ids are given.
func (s *Service) Comments(ctx context.Context, t Target, p paging.Page) ([]Comment, paging.Meta, error) {
	if t.BlogID != "" && t.ContainerID != "" {
		return nil, paging.Meta{}, check.Invalid("blog_id", "at most one of blog_id and container_id may be given")
	}
	cs, total, err := s.store.Comments(ctx, t, p)
	if err != nil {
		return nil, paging.Meta{}, err
	}
	return cs, p.Meta(total), nil
}

// PendingComments lists the comments waiting for approval, oldest first.
func (s *Service) PendingComments(ctx context.Context, p paging.Page) ([]Comment, paging.Meta, error) {
	cs, total, err := s.store.PendingComments(ctx, p)
	if err != nil {
		return nil, paging.Meta{}, err
	}
	return cs, p.Meta(total), nil
}

// Approve publishes a pending comment. It returns NotFound for an unknown comment and
// Conflict when it is no longer pending.
func (s *Service) Approve(ctx context.Context, id string) (Comment, error) {
	return s.store.DecideComment(ctx, id, Approved)
}

// Reject refuses a pending comment. It returns NotFound for an unknown comment and Conflict
// when it is no longer pending.
func (s *Service) Reject(ctx context.Context, id string) (Comment, error) {
	return s.store.DecideComment(ctx, id, Rejected)
}

// Slides lists the active slides by position.
func (s *Service) Slides(ctx context.Context) ([]Slide, error) { return s.store.Slides(ctx) }

// CreateSlide records a slide. It returns Invalid for bad fields.
func (s *Service) CreateSlide(ctx context.Context, sl Slide) (Slide, error) {
	var c check.Checker
	c.Length("title", sl.Title, 1, 300)
	c.Length("subtitle", sl.Subtitle, 0, 1000)
	c.URL("image_url", sl.ImageURL, true)
	c.URL("link_url", sl.LinkURL, false)
	if err := c.Err(); err != nil {
		return Slide{}, err
	}
	sl.ID, sl.CreatedAt = s.newID(), s.now().UTC()
	if err := s.store.CreateSlide(ctx, sl); err != nil {
		return Slide{}, err
	}
	return sl, nil
}

// DeleteSlide removes a slide. It returns NotFound for an unknown id.
func (s *Service) DeleteSlide(ctx context.Context, id string) error {
	return s.store.DeleteSlide(ctx, id)
}

// HomeEvents lists the events that have not ended, by position then start.
func (s *Service) HomeEvents(ctx context.Context) ([]HomeEvent, error) {
	return s.store.HomeEvents(ctx, s.now())
}

// CreateHomeEvent records an event. It returns Invalid for bad fields or an end not after
// the start.
func (s *Service) CreateHomeEvent(ctx context.Context, e HomeEvent) (HomeEvent, error) {
	var c check.Checker
	c.Length("title", e.Title, 1, 300)
	c.Length("description", e.Description, 0, 5000)
	c.URL("image_url", e.ImageURL, false)
	c.URL("link_url", e.LinkURL, false)
	if e.EndsAt != nil && !e.EndsAt.After(e.StartsAt) {
		c.Add("ends_at", "must be after starts_at")
	}
	if err := c.Err(); err != nil {
		return HomeEvent{}, err
	}
	e.ID, e.CreatedAt = s.newID(), s.now().UTC()
	if err := s.store.CreateHomeEvent(ctx, e); err != nil {
		return HomeEvent{}, err
	}
	return e, nil
}

// DeleteHomeEvent removes an event. It returns NotFound for an unknown id.
func (s *Service) DeleteHomeEvent(ctx context.Context, id string) error {
	return s.store.DeleteHomeEvent(ctx, id)
}

// PublicSettings answers the public part of the tenant's settings, empty when it has none or
// when no tenant is named.
func (s *Service) PublicSettings(ctx context.Context, tenantID string) (map[string]any, error) {
	if tenantID == "" {
		return map[string]any{}, nil
	}
	st, err := s.Settings(ctx, tenantID)
	return st.Public, err
}

// Settings answers the tenant's whole settings, empty when it has none. It returns Invalid
// when no tenant is named.
func (s *Service) Settings(ctx context.Context, tenantID string) (Settings, error) {
	if tenantID == "" {
		return Settings{}, check.Invalid("tenant_id", "is required for a token without a tenant")
	}
	return s.store.Settings(ctx, tenantID)
}

// PutSettings replaces the tenant's settings. It returns Invalid when no tenant is named and
// TooLarge when the settings encode to more than 64 KiB.
func (s *Service) PutSettings(ctx context.Context, tenantID string, st Settings) (Settings, error) {
	if tenantID == "" {
		return Settings{}, check.Invalid("tenant_id", "is required for a token without a tenant")
	}
	if st.Public == nil {
		st.Public = map[string]any{}
	}
	if st.Private == nil {
		st.Private = map[string]any{}
	}
	raw, err := json.Marshal(st.Public)
	if err != nil {
		return Settings{}, check.Invalid("public", "must be a JSON object")
	}
	rawPrivate, err := json.Marshal(st.Private)
	if err != nil {
		return Settings{}, check.Invalid("private", "must be a JSON object")
	}
	if len(raw)+len(rawPrivate) > maxSettingsBytes {
		return Settings{}, apperr.E(apperr.TooLarge, "settings_too_large", "settings must encode to at most 64 KiB")
	}
	if err := s.store.PutSettings(ctx, tenantID, st); err != nil {
		return Settings{}, err
	}
	return st, nil
}
