package catalog

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/paging"
)

// Catalog limits.
const (
	DefaultRelatedLimit = 8
	MaxRelatedLimit     = 50
	maxSearchWords      = 10
	maxLinks            = 50
)

// Tags lists every tag ordered by name.
func (s *Service) Tags(ctx context.Context) ([]Tag, error) { return s.store.Tags(ctx) }

// CreateTag creates a tag, deriving an empty slug from the name. It answers apperr Invalid
// for a bad slug or name and apperr Conflict for a taken slug.
func (s *Service) CreateTag(ctx context.Context, slug, name string) (Tag, error) {
	var c check.Checker
	c.Required("name", &name, 100)
	if slug == "" {
		slug = check.Slugify(name, 100)
	}
	c.Required("slug", &slug, 100)
	c.Slug("slug", &slug, 100)
	if err := c.Err(); err != nil {
		return Tag{}, err
	}
	t := Tag{ID: s.newID(), Slug: slug, Name: name}
	return t, s.store.CreateTag(ctx, t)
}

// Categories lists every category by position, then name.
func (s *Service) Categories(ctx context.Context) ([]Category, error) { return s.store.Categories(ctx) }

// CreateCategory creates a category, deriving an empty slug from the name. It answers apperr
// Invalid for bad fields and apperr Conflict for a taken slug.
func (s *Service) CreateCategory(ctx context.Context, in Category) (Category, error) {
	var c check.Checker
	c.Required("name", &in.Name, 100)
	if in.Slug == "" {
		in.Slug = check.Slugify(in.Name, 100)
	}
	c.Required("slug", &in.Slug, 100)
	c.Slug("slug", &in.Slug, 100)
	c.Text("description", &in.Description, 2000)
	c.Text("image", &in.Image, 2000)
	if err := c.Err(); err != nil {
		return Category{}, err
	}
	in.ID = s.newID()
	return in, s.store.CreateCategory(ctx, in)
}

func checkContainer(c *check.Checker, f ContainerFields) {
	c.Slug("slug", f.Slug, 100)
	c.Name("name", f.Name, 200)
	c.Name("primary_mode", f.PrimaryMode, 50)
	c.Text("description", f.Description, 5000)
	c.Text("keywords", f.Keywords, 1000)
	c.Text("news_text", f.NewsText, 1000)
	for field, v := range map[string]*string{"image": f.Image, "demo": f.Demo, "full_demo": f.FullDemo, "mini_demo": f.MiniDemo} {
		c.Text(field, v, 2000)
	}
	c.IDs("category_ids", f.CategoryIDs, maxLinks)
	c.IDs("tag_ids", f.TagIDs, maxLinks)
}

// CreateContainer creates an unpublished container. It answers apperr Invalid for missing or
// bad fields and unknown category or tag ids, and apperr Conflict for a taken slug.
func (s *Service) CreateContainer(ctx context.Context, f ContainerFields) (Container, error) {
	var c check.Checker
	c.Required("slug", f.Slug, 100)
	c.Required("name", f.Name, 200)
	c.Required("primary_mode", f.PrimaryMode, 50)
	checkContainer(&c, f)
	if err := c.Err(); err != nil {
		return Container{}, err
	}
	now := s.now().UTC()
	ct := Container{ID: s.newID(), CategoryIDs: []string{}, TagIDs: []string{}, CreatedAt: now, UpdatedAt: now}
	f.apply(&ct)
	return ct, s.store.CreateContainer(ctx, ct)
}

// UpdateContainer changes the given fields of a live container; given id lists replace the
// old ones. It answers apperr NotFound, apperr Invalid and apperr Conflict like CreateContainer.
func (s *Service) UpdateContainer(ctx context.Context, id string, f ContainerFields) (Container, error) {
	var c check.Checker
	checkContainer(&c, f)
	if err := c.Err(); err != nil {
		return Container{}, err
	}
	ct, err := s.store.UpdateContainer(ctx, id, func(ct *Container) error {
		f.apply(ct)
		ct.UpdatedAt = s.now().UTC()
		return nil
	})
	return ct, err
}

func (f ContainerFields) apply(ct *Container) {
	set(&ct.Slug, f.Slug)
	set(&ct.Name, f.Name)
	set(&ct.PrimaryMode, f.PrimaryMode)
	set(&ct.Description, f.Description)
	set(&ct.Keywords, f.Keywords)
	set(&ct.NewsText, f.NewsText)
	set(&ct.Image, f.Image)
	set(&ct.Demo, f.Demo)
	set(&ct.FullDemo, f.FullDemo)
	set(&ct.MiniDemo, f.MiniDemo)
	set(&ct.IsPremium, f.IsPremium)
	set(&ct.IsMockup, f.IsMockup)
	if f.CategoryIDs != nil {
		ct.CategoryIDs = dedupe(*f.CategoryIDs)
	}
	if f.TagIDs != nil {
		ct.TagIDs = dedupe(*f.TagIDs)
	}
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func dedupe(ids []string) []string {
	out := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		id = strings.ToLower(id)
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// DeleteContainer soft-deletes a container: it leaves the catalog and every read but stays in
// the database. It answers apperr NotFound when there is no live container with that id.
func (s *Service) DeleteContainer(ctx context.Context, id string) error {
	return s.store.DeleteContainer(ctx, id, s.now().UTC())
}

// Publish puts a container in the catalog; publishing a published one changes nothing. It
// answers apperr NotFound when there is no live container with that id.
func (s *Service) Publish(ctx context.Context, id, actor string) error {
	return s.store.SetPublished(ctx, id, true, "", actor, s.now().UTC())
}

// Unpublish takes a container out of the catalog and records the reason. It answers apperr
// Invalid for a reason over 1000 characters and apperr NotFound when there is no live
// container with that id.
func (s *Service) Unpublish(ctx context.Context, id, reason, actor string) error {
	var c check.Checker
	c.Text("reason", &reason, 1000)
	if err := c.Err(); err != nil {
		return err
	}
	return s.store.SetPublished(ctx, id, false, reason, actor, s.now().UTC())
}

// TemplateFilter is the catalog request as the client sent it.
type TemplateFilter struct {
	Q          string
	CategoryID string
	TagIDs     []string
	Mode       string
	Aspect     string
	IsPremium  *bool
	Sort       string
	Page       *int
	PageSize   *int
}

// Templates answers one page of published, live templates with the exact total. It answers apperr
// Invalid for an unknown sort or aspect and a page or page size outside the paging rule.
func (s *Service) Templates(ctx context.Context, f TemplateFilter) (TemplatePage, error) {
	q := TemplateQuery{CategoryID: f.CategoryID, TagIDs: dedupe(f.TagIDs), Mode: f.Mode, Aspect: f.Aspect,
		IsPremium: f.IsPremium, Sort: f.Sort, Words: searchWords(f.Q)}
	var c check.Checker
	c.Text("q", &f.Q, 200)
	c.Text("mode", &f.Mode, 50)
	if f.Aspect != "" {
		c.OneOf("aspect", &f.Aspect, Aspects())
	}
	if f.Sort != "" {
		c.OneOf("sort", &f.Sort, Sorts())
	}
	if len(q.TagIDs) > 20 {
		c.Add("tag_ids", "must hold at most 20 ids")
	}
	pg, pageErr := paging.New(f.Page, f.PageSize)
	if err := c.Err(); err != nil {
		// One answer names every bad field, the paging ones included.
		if pe, ok := apperr.As(pageErr); ok {
			if ce, ok := apperr.As(err); ok {
				ce.WithFields(pe.Fields...)
			}
		}
		return TemplatePage{}, err
	}
	if pageErr != nil {
		return TemplatePage{}, pageErr
	}
	q.Page, q.PageSize = pg.Number, pg.Size
	if q.Sort == "" {
		q.Sort = SortNewest
		if len(q.Words) > 0 {
			q.Sort = SortRelevance
		}
	}
	cards, total, err := s.listings.Templates(ctx, q)
	if err != nil {
		return TemplatePage{}, err
	}
	page := TemplatePage{Cards: cards, Total: total, Page: q.Page, PageSize: q.PageSize, HasMore: len(cards) > q.PageSize}
	if page.HasMore {
		page.Cards = cards[:q.PageSize]
	}
	return page, nil
}

// searchWords splits a search into words of letters and digits, so that no input can break
// the text-search syntax.
func searchWords(q string) []string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if len(words) > maxSearchWords {
		words = words[:maxSearchWords]
	}
	return words
}

// Template answers a published, live template by slug or id. It answers apperr NotFound
// otherwise.
func (s *Service) Template(ctx context.Context, slugOrID string) (TemplateDetail, error) {
	return s.store.Template(ctx, slugOrID)
}

// TemplateProjects lists the published projects of a published, live template. It answers
// apperr NotFound when the template is not in the catalog.
func (s *Service) TemplateProjects(ctx context.Context, containerID string) ([]Project, error) {
	return s.store.TemplateProjects(ctx, containerID)
}

// RelatedTemplates lists published templates sharing categories or tags with a published one,
// most shared first. It answers apperr Invalid for a limit outside 1..50 and apperr NotFound
// when the template is not in the catalog.
func (s *Service) RelatedTemplates(ctx context.Context, containerID string, limit *int) ([]TemplateCard, error) {
	var c check.Checker
	c.Between("limit", limit, 1, MaxRelatedLimit)
	if err := c.Err(); err != nil {
		return nil, err
	}
	n := DefaultRelatedLimit
	set(&n, limit)
	return s.listings.Related(ctx, containerID, n)
}

func checkProject(c *check.Checker, f ProjectFields) {
	c.Name("name", f.Name, 200)
	c.Name("choose_mode", f.ChooseMode, 50)
	c.Between("original_width", f.OriginalWidth, 1, 16384)
	c.Between("original_height", f.OriginalHeight, 1, 16384)
	c.Between("free_fps", f.FreeFPS, 0, 240)
	c.NonNegative("project_duration_sec", f.ProjectDurationSec)
	c.NonNegative("min_duration_sec", f.MinDurationSec)
	c.NonNegative("max_duration_sec", f.MaxDurationSec)
	c.NonNegative("vip_factor", f.VIPFactor)
	c.OneOf("aspect", f.Aspect, Aspects())
	c.Text("resolution", f.Resolution, 50)
	c.Text("render_aep_comp", f.RenderAEPComp, 200)
	c.Text("description", f.Description, 5000)
	for field, v := range map[string]*string{"image": f.Image, "full_demo": f.FullDemo, "download_link": f.DownloadLink} {
		c.Text(field, v, 2000)
	}
}

func checkDurations(c *check.Checker, p Project) {
	if p.MaxDurationSec > 0 && p.MinDurationSec > p.MaxDurationSec {
		c.Add("min_duration_sec", "must not exceed max_duration_sec")
	}
}

// CreateProject creates a project of a live container. Without an aspect, the aspect is
// derived from the original size. It answers apperr Invalid for missing or bad fields or an
// unknown render server, and apperr NotFound for an unknown container.
func (s *Service) CreateProject(ctx context.Context, f ProjectFields) (Project, error) {
	var c check.Checker
	c.Required("container_id", f.ContainerID, 36)
	c.Required("name", f.Name, 200)
	c.Required("choose_mode", f.ChooseMode, 50)
	if f.OriginalWidth == nil {
		c.Add("original_width", "is required")
	}
	if f.OriginalHeight == nil {
		c.Add("original_height", "is required")
	}
	if f.ProjectDurationSec == nil {
		c.Add("project_duration_sec", "is required")
	}
	checkProject(&c, f)
	now := s.now().UTC()
	p := Project{ID: s.newID(), VIPFactor: 1, IsPublished: true, CreatedAt: now, UpdatedAt: now}
	f.apply(&p)
	checkDurations(&c, p)
	if err := c.Err(); err != nil {
		return Project{}, err
	}
	return p, s.store.CreateProject(ctx, p)
}

// Project answers a project. A project of a deleted container is not found; one of an
// unpublished container, or an unpublished project, is found only by privileged callers
// (administrators and services). It answers apperr NotFound otherwise.
func (s *Service) Project(ctx context.Context, id string, privileged bool) (Project, error) {
	return s.store.Project(ctx, id, privileged)
}

// UpdateProject changes the given fields of a project. It answers apperr NotFound and apperr
// Invalid like CreateProject.
func (s *Service) UpdateProject(ctx context.Context, id string, f ProjectFields) (Project, error) {
	var c check.Checker
	checkProject(&c, f)
	if err := c.Err(); err != nil {
		return Project{}, err
	}
	p, err := s.store.UpdateProject(ctx, id, func(p *Project) error {
		f.apply(p)
		var c check.Checker
		checkDurations(&c, *p)
		p.UpdatedAt = s.now().UTC()
		return c.Err()
	})
	return p, err
}

// DeleteProject deletes a project with its scenes and editor graph. It answers apperr NotFound
// for an unknown project.
func (s *Service) DeleteProject(ctx context.Context, id string) error {
	return s.store.DeleteProject(ctx, id)
}

func (f ProjectFields) apply(p *Project) {
	set(&p.ContainerID, f.ContainerID)
	switch {
	case f.UnlinkProjectServer:
		p.ProjectServerID = nil
	case f.ProjectServerID != nil:
		p.ProjectServerID = f.ProjectServerID
	}
	set(&p.Name, f.Name)
	set(&p.Description, f.Description)
	set(&p.OriginalWidth, f.OriginalWidth)
	set(&p.OriginalHeight, f.OriginalHeight)
	set(&p.Resolution, f.Resolution)
	set(&p.ProjectDurationSec, f.ProjectDurationSec)
	set(&p.MinDurationSec, f.MinDurationSec)
	set(&p.MaxDurationSec, f.MaxDurationSec)
	set(&p.ChooseMode, f.ChooseMode)
	set(&p.Image, f.Image)
	set(&p.FullDemo, f.FullDemo)
	set(&p.DownloadLink, f.DownloadLink)
	set(&p.FreeFPS, f.FreeFPS)
	set(&p.VIPFactor, f.VIPFactor)
	set(&p.RenderAEPComp, f.RenderAEPComp)
	set(&p.IsPublished, f.IsPublished)
	switch {
	case f.Aspect != nil:
		p.Aspect = *f.Aspect
	case f.OriginalWidth != nil || f.OriginalHeight != nil:
		p.Aspect = AspectOf(p.OriginalWidth, p.OriginalHeight)
	}
}

// AspectOf names the known aspect ratio of a width and height, or "" when it is none of them.
func AspectOf(w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	for _, a := range [][3]int{{16, 9}, {9, 16}, {1, 1}, {4, 5}} {
		if w*a[1] == h*a[0] {
			return fmt.Sprintf("%d:%d", a[0], a[1])
		}
	}
	return ""
}
