package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// Catalog implements catalog.Store.
type Catalog struct{ db *gorm.DB }

// NewCatalog returns a Catalog store.
func NewCatalog(db *gorm.DB) *Catalog { return &Catalog{db: db} }

type tagModel struct {
	ID   string `gorm:"primaryKey"`
	Slug string
	Name string
}

func (tagModel) TableName() string { return "tags" }

func (m tagModel) toDomain() catalog.Tag { return catalog.Tag{ID: m.ID, Slug: m.Slug, Name: m.Name} }

type categoryModel struct {
	ID          string `gorm:"primaryKey"`
	Slug        string
	Name        string
	Description string
	Image       string
	Position    int
}

func (categoryModel) TableName() string { return "categories" }

func (m categoryModel) toDomain() catalog.Category {
	return catalog.Category{ID: m.ID, Slug: m.Slug, Name: m.Name, Description: m.Description, Image: m.Image, Position: m.Position}
}

type containerModel struct {
	ID              string `gorm:"primaryKey"`
	Slug            string
	Name            string
	Description     string
	Keywords        string
	NewsText        string
	Image           string
	Demo            string
	FullDemo        string
	MiniDemo        string
	IsPublished     bool
	IsPremium       bool
	IsMockup        bool
	PrimaryMode     string
	RateAvg         float64
	RateCount       int
	UseCount        int64
	PublishedAt     *time.Time
	UnpublishedAt   *time.Time
	UnpublishReason *string
	CreatedAt       time.Time
	UpdatedAt       time.Time
	DeletedAt       *time.Time
}

func (containerModel) TableName() string { return "containers" }

func toContainerModel(c catalog.Container) containerModel {
	return containerModel{
		ID: c.ID, Slug: c.Slug, Name: c.Name, Description: c.Description, Keywords: c.Keywords, NewsText: c.NewsText,
		Image: c.Image, Demo: c.Demo, FullDemo: c.FullDemo, MiniDemo: c.MiniDemo, IsPublished: c.IsPublished,
		IsPremium: c.IsPremium, IsMockup: c.IsMockup, PrimaryMode: c.PrimaryMode, RateAvg: c.RateAvg,
		RateCount: c.RateCount, UseCount: c.UseCount, PublishedAt: c.PublishedAt, UnpublishReason: c.UnpublishReason,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
}

func (m containerModel) toDomain(categoryIDs, tagIDs []string) catalog.Container {
	return catalog.Container{
		ID: m.ID, Slug: m.Slug, Name: m.Name, Description: m.Description, Keywords: m.Keywords, NewsText: m.NewsText,
		Image: m.Image, Demo: m.Demo, FullDemo: m.FullDemo, MiniDemo: m.MiniDemo, IsPublished: m.IsPublished,
		IsPremium: m.IsPremium, IsMockup: m.IsMockup, PrimaryMode: m.PrimaryMode, RateAvg: m.RateAvg,
		RateCount: m.RateCount, UseCount: m.UseCount, CategoryIDs: categoryIDs, TagIDs: tagIDs,
		PublishedAt: m.PublishedAt, UnpublishReason: m.UnpublishReason, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

// cardRow is a catalog row: the card's container columns and its aspects, comma separated.
type cardRow struct {
	ID          string
	Slug        string
	Name        string
	Image       string
	Demo        string
	MiniDemo    string
	IsPremium   bool
	IsMockup    bool
	PrimaryMode string
	RateAvg     float64
	RateCount   int
	UseCount    int64
	Aspects     string
}

func (r cardRow) toDomain() catalog.TemplateCard {
	aspects := []string{}
	if r.Aspects != "" {
		aspects = strings.Split(r.Aspects, ",")
	}
	return catalog.TemplateCard{
		ContainerID: r.ID, Slug: r.Slug, Name: r.Name, Image: r.Image, Demo: r.Demo, MiniDemo: r.MiniDemo,
		IsPremium: r.IsPremium, IsMockup: r.IsMockup, PrimaryMode: r.PrimaryMode, RateAvg: r.RateAvg,
		RateCount: r.RateCount, UseCount: r.UseCount, AvailableAspects: aspects,
	}
}

// cardColumns are a card's columns; the aspects of its published projects are kept on the row
// (migration 00035), so a page reads nothing but containers.
const cardColumns = `c.id, c.slug, c.name, c.image, c.demo, c.mini_demo, c.is_premium, c.is_mockup, c.primary_mode,
	c.rate_avg, c.rate_count, c.use_count, array_to_string(c.aspects, ',') AS aspects`

// live is the condition for a container in the catalog.
const live = `c.is_published AND c.deleted_at IS NULL`

// Tags lists every tag ordered by name.
func (s *Catalog) Tags(ctx context.Context) ([]catalog.Tag, error) {
	var rows []tagModel
	if err := s.db.WithContext(ctx).Order("name, id").Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "tag")
	}
	return mapAll(rows, tagModel.toDomain), nil
}

// CreateTag stores a tag; a taken slug is an apperr Conflict.
func (s *Catalog) CreateTag(ctx context.Context, t catalog.Tag) error {
	err := s.db.WithContext(ctx).Create(&tagModel{ID: t.ID, Slug: t.Slug, Name: t.Name}).Error
	return slugConflict(err, "tag")
}

// Categories lists every category by position, then name.
func (s *Catalog) Categories(ctx context.Context) ([]catalog.Category, error) {
	var rows []categoryModel
	if err := s.db.WithContext(ctx).Order("position, name, id").Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "category")
	}
	return mapAll(rows, categoryModel.toDomain), nil
}

// CreateCategory stores a category; a taken slug is an apperr Conflict.
func (s *Catalog) CreateCategory(ctx context.Context, c catalog.Category) error {
	m := categoryModel{ID: c.ID, Slug: c.Slug, Name: c.Name, Description: c.Description, Image: c.Image, Position: c.Position}
	return slugConflict(s.db.WithContext(ctx).Create(&m).Error, "category")
}

func slugConflict(err error, what string) error {
	if pgdb.IsUniqueViolation(err, "") {
		return apperr.Wrap(err, apperr.Conflict, "slug_taken", "A "+what+" with this slug already exists.").
			WithFields(apperr.FieldError{Field: "slug", Message: "is taken"})
	}
	return pgdb.Translate(err, what)
}

// CreateContainer stores a container with its category and tag links. Unknown category or tag
// ids are an apperr Invalid; a taken slug is an apperr Conflict.
func (s *Catalog) CreateContainer(ctx context.Context, c catalog.Container) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		if err := tx.Create(ptr(toContainerModel(c))).Error; err != nil {
			return slugConflict(err, "container")
		}
		return replaceLinks(tx, c)
	})
}

// replaceLinks sets a container's categories and tags to exactly the given ones.
func replaceLinks(tx *gorm.DB, c catalog.Container) error {
	for _, l := range []struct {
		table, column, target, field string
		ids                          []string
	}{
		{"container_categories", "category_id", "categories", "category_ids", c.CategoryIDs},
		{"container_tags", "tag_id", "tags", "tag_ids", c.TagIDs},
	} {
		var n int64
		if err := tx.Table(l.target).Where("id IN ?", nonEmpty(l.ids)).Count(&n).Error; err != nil {
			return fmt.Errorf("store: count %s: %w", l.target, err)
		}
		if int(n) != len(l.ids) {
			return apperr.E(apperr.Invalid, "invalid_reference", fmt.Sprintf("Field %q names %s that do not exist.", l.field, l.target)).
				WithFields(apperr.FieldError{Field: l.field, Message: "names unknown ids"})
		}
		if err := tx.Exec("DELETE FROM "+l.table+" WHERE container_id = ?", c.ID).Error; err != nil {
			return fmt.Errorf("store: clear %s: %w", l.table, err)
		}
		for _, id := range l.ids {
			if err := tx.Exec("INSERT INTO "+l.table+" (container_id, "+l.column+") VALUES (?, ?)", c.ID, id).Error; err != nil {
				return fmt.Errorf("store: link %s: %w", l.table, err)
			}
		}
	}
	return nil
}

// nonEmpty keeps an IN list valid SQL when it is empty.
func nonEmpty(ids []string) []string {
	if len(ids) == 0 {
		return []string{uuid.Nil.String()}
	}
	return ids
}

// UpdateContainer applies update to a live container under a row lock and saves it with its
// links. It answers apperr NotFound for a missing or deleted container.
func (s *Catalog) UpdateContainer(ctx context.Context, id string, update func(*catalog.Container) error) (catalog.Container, error) {
	var out catalog.Container
	err := pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		var m containerModel
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ? AND deleted_at IS NULL", id).Take(&m).Error; err != nil {
			return pgdb.Translate(err, "container")
		}
		cats, tags, err := links(tx, id)
		if err != nil {
			return err
		}
		c := m.toDomain(cats, tags)
		if err := update(&c); err != nil {
			return err
		}
		next := toContainerModel(c)
		next.UnpublishedAt = m.UnpublishedAt
		if err := tx.Save(&next).Error; err != nil {
			return slugConflict(err, "container")
		}
		out = c
		return replaceLinks(tx, c)
	})
	return out, err
}

func links(tx *gorm.DB, id string) (cats, tags []string, err error) {
	cats, tags = []string{}, []string{}
	if err = tx.Raw(`SELECT category_id FROM container_categories WHERE container_id = ? ORDER BY category_id`, id).Scan(&cats).Error; err != nil {
		return nil, nil, fmt.Errorf("store: container categories: %w", err)
	}
	if err = tx.Raw(`SELECT tag_id FROM container_tags WHERE container_id = ? ORDER BY tag_id`, id).Scan(&tags).Error; err != nil {
		return nil, nil, fmt.Errorf("store: container tags: %w", err)
	}
	return cats, tags, nil
}

// DeleteContainer marks a live container deleted. It answers apperr NotFound otherwise.
func (s *Catalog) DeleteContainer(ctx context.Context, id string, at time.Time) error {
	res := s.db.WithContext(ctx).Exec(`UPDATE containers SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`, at, at, id)
	if res.Error != nil {
		return pgdb.Translate(res.Error, "container")
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("container %s not found", id)
	}
	return nil
}

// SetPublished moves a live container to the given state and records the change with its
// reason and actor; a container already in that state is left alone. It answers apperr
// NotFound for a missing or deleted container.
func (s *Catalog) SetPublished(ctx context.Context, id string, published bool, reason, actor string, at time.Time) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		var m containerModel
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ? AND deleted_at IS NULL", id).Take(&m).Error; err != nil {
			return pgdb.Translate(err, "container")
		}
		if m.IsPublished == published {
			return nil
		}
		action, change := "publish", map[string]any{"is_published": true, "published_at": at, "unpublish_reason": nil, "updated_at": at}
		if !published {
			action, change = "unpublish", map[string]any{"is_published": false, "unpublished_at": at, "unpublish_reason": reason, "updated_at": at}
		}
		if err := tx.Model(&containerModel{}).Where("id = ?", id).Updates(change).Error; err != nil {
			return fmt.Errorf("store: %s container: %w", action, err)
		}
		newID, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("store: publication id: %w", err)
		}
		err = tx.Exec(`INSERT INTO container_publications (id, container_id, action, reason, actor_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			newID.String(), id, action, reason, actor, at).Error
		return pgdb.Translate(err, "container publication")
	})
}

// Template answers a published, live template by slug or id with its published projects,
// categories and tags. It answers apperr NotFound otherwise.
func (s *Catalog) Template(ctx context.Context, slugOrID string) (catalog.TemplateDetail, error) {
	db := s.db.WithContext(ctx)
	var m containerModel
	q := db.Table("containers c").Select("c.*").Where(live)
	if id, err := uuid.Parse(slugOrID); err == nil {
		// A slug may look like a uuid; the template with that id wins.
		q = q.Where("(c.id = ? OR c.slug = ?)", id.String(), slugOrID).
			Order(clause.OrderBy{Expression: clause.Expr{SQL: "c.id = ? DESC", Vars: []any{id.String()}}})
	} else {
		q = q.Where("c.slug = ?", slugOrID)
	}
	if err := q.Take(&m).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return catalog.TemplateDetail{}, apperr.E(apperr.NotFound, "template_not_found", "No published template has this slug or id.")
		}
		return catalog.TemplateDetail{}, pgdb.Translate(err, "template")
	}
	cats, tags, err := links(db, m.ID)
	if err != nil {
		return catalog.TemplateDetail{}, err
	}
	d := catalog.TemplateDetail{Container: m.toDomain(cats, tags)}
	var cms []categoryModel
	if err := db.Raw(`SELECT k.* FROM categories k JOIN container_categories cc ON cc.category_id = k.id
		WHERE cc.container_id = ? ORDER BY k.position, k.name, k.id`, m.ID).Scan(&cms).Error; err != nil {
		return d, fmt.Errorf("store: template categories: %w", err)
	}
	var tms []tagModel
	if err := db.Raw(`SELECT t.* FROM tags t JOIN container_tags ct ON ct.tag_id = t.id
		WHERE ct.container_id = ? ORDER BY t.name, t.id`, m.ID).Scan(&tms).Error; err != nil {
		return d, fmt.Errorf("store: template tags: %w", err)
	}
	var pms []projectModel
	if err := db.Where("container_id = ? AND is_published", m.ID).Order("created_at, id").Find(&pms).Error; err != nil {
		return d, fmt.Errorf("store: template projects: %w", err)
	}
	d.Categories, d.Tags, d.Projects = mapAll(cms, categoryModel.toDomain), mapAll(tms, tagModel.toDomain), mapAll(pms, projectModel.toDomain)
	return d, nil
}

// inCatalog answers apperr NotFound unless the container is published and live.
func inCatalog(db *gorm.DB, id string) error {
	var n int64
	if err := db.Table("containers c").Where("c.id = ? AND "+live, id).Count(&n).Error; err != nil {
		return fmt.Errorf("store: find template: %w", err)
	}
	if n == 0 {
		return apperr.E(apperr.NotFound, "template_not_found", "No published template has this id.")
	}
	return nil
}

// TemplateProjects lists the published projects of a template in the catalog, oldest first.
// It answers apperr NotFound when the template is not in the catalog.
func (s *Catalog) TemplateProjects(ctx context.Context, containerID string) ([]catalog.Project, error) {
	db := s.db.WithContext(ctx)
	if err := inCatalog(db, containerID); err != nil {
		return nil, err
	}
	var rows []projectModel
	if err := db.Where("container_id = ? AND is_published", containerID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: template projects: %w", err)
	}
	return mapAll(rows, projectModel.toDomain), nil
}

func mapAll[M, D any](rows []M, f func(M) D) []D {
	out := make([]D, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
