package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
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

// Templates answers up to q.PageSize+1 cards of the catalog from the page's start, so that the
// caller sees whether more follow. For a filter set catalog_counts keeps, the kept total
// chooses the plan: a page past the last match reads nothing; a selective filter collects its
// matches before sorting them, where the planner would walk a sort index over the whole
// catalog in search of a few matches (742–1,856 ms for an empty combination at 100k); and a
// walk is bounded (boundedWalk), so that matches clustered far along the order cost no more
// than collecting them.
func (s *Catalog) Templates(ctx context.Context, q catalog.TemplateQuery) ([]catalog.TemplateCard, error) {
	cond, args := templateFilter(q)
	order := sortOrders[q.Sort]
	if q.Sort == catalog.SortRelevance {
		var byRank []any
		order, byRank = relevance(q.Words)
		args = append(args, byRank...)
	}
	offset, limit := (q.Page-1)*q.PageSize, q.PageSize+1
	matches, all, kept, err := s.keptTotals(ctx, q)
	if err != nil {
		return nil, err
	}
	page := func(from string) ([]catalog.TemplateCard, error) {
		var rows []cardRow
		if err := s.db.WithContext(ctx).Raw(`SELECT `+cardColumns+` FROM `+from+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
			append(slices.Clip(args), limit, offset)...).Scan(&rows).Error; err != nil {
			return nil, fmt.Errorf("store: list templates: %w", err)
		}
		return mapAll(rows, cardRow.toDomain), nil
	}
	collect := `(SELECT * FROM containers c WHERE ` + cond + ` OFFSET 0) c`
	switch {
	case !kept:
		return page(`containers c WHERE ` + cond)
	case offset >= matches:
		return []catalog.TemplateCard{}, nil
	case filterFirst(matches, all, offset+limit):
		return page(collect)
	}
	window, bounded := boundedWalk(matches, all, offset+limit)
	if !bounded {
		return page(`containers c WHERE ` + cond)
	}
	cards, err := page(`(SELECT * FROM containers c WHERE ` + live + ` ORDER BY ` + order + ` LIMIT ` + strconv.Itoa(window) + `) c WHERE ` + cond)
	if err != nil || len(cards) == min(limit, matches-offset) {
		return cards, err
	}
	// The window held fewer of the page's matches than there are: they cluster further along
	// the order (names sharing a word with their category, say), so collect them instead.
	return page(collect)
}

// filterFirst reports whether collecting a filter's matches and sorting them reads fewer rows
// than walking a sort index until rows cards matched: the walk passes about rows × all /
// matches entries, the collection reads the matches, so it wins below √(rows × all).
func filterFirst(matches, all, rows int) bool {
	return matches*matches < rows*all
}

// boundedWalk answers how far a sort-index walk for rows cards of a filter with matches of the
// catalog's all templates may go: four times the rows × all / matches entries it passes when
// matches are spread evenly along the order, and false when that is the whole catalog anyway.
// Within such a prefix of the order, the first rows matches, if there, are the page's.
func boundedWalk(matches, all, rows int) (window int, bounded bool) {
	window = 4 * rows * all / max(matches, 1)
	return window, window < all
}

// CountTemplates answers how many templates in the catalog match q's filters: read from
// catalog_counts when it holds the filter set (migration 00039), else counted.
func (s *Catalog) CountTemplates(ctx context.Context, q catalog.TemplateQuery) (int, error) {
	if matches, _, kept, err := s.keptTotals(ctx, q); err != nil || kept {
		return matches, err
	}
	cond, args := templateFilter(q)
	var total int64
	if err := s.db.WithContext(ctx).Raw(`SELECT count(*) FROM containers c WHERE `+cond, args...).Scan(&total).Error; err != nil {
		return 0, fmt.Errorf("store: count templates: %w", err)
	}
	return int(total), nil
}

// keptTotals reads from catalog_counts how many templates match q's filters and how many the
// catalog holds, when it keeps q's filter set (kept); a filter set no catalog template ever
// had has no row, which is 0.
func (s *Catalog) keptTotals(ctx context.Context, q catalog.TemplateQuery) (matches, all int, kept bool, err error) {
	cond, args, ok := keptCount(q)
	if !ok {
		return 0, 0, false, nil
	}
	var totals struct{ Matches, Catalog int64 }
	if err := s.db.WithContext(ctx).Raw(`SELECT
		coalesce((SELECT total FROM catalog_counts WHERE `+cond+`), 0) AS matches,
		coalesce((SELECT total FROM catalog_counts WHERE tag_id IS NULL AND category_id IS NULL AND is_premium IS NULL
			AND mode IS NULL AND aspect IS NULL), 0) AS catalog`, args...).Scan(&totals).Error; err != nil {
		return 0, 0, false, fmt.Errorf("store: read template count: %w", err)
	}
	return int(totals.Matches), int(totals.Catalog), true, nil
}

// keptCount answers the condition selecting q's row of catalog_counts, and false when
// catalog_counts keeps no row for q's filters: search words, several tags, or a tag with any
// other filter. A NULL column of a row stands for "any".
func keptCount(q catalog.TemplateQuery) (cond string, args []any, ok bool) {
	if len(q.Words) > 0 || len(q.TagIDs) > 1 {
		return "", nil, false
	}
	if len(q.TagIDs) == 1 && (q.CategoryID != "" || q.IsPremium != nil || q.Mode != "" || q.Aspect != "") {
		return "", nil, false
	}
	var where []string
	key := func(column string, set bool, value any) {
		if !set {
			where = append(where, column+` IS NULL`)
			return
		}
		where, args = append(where, column+` = ?`), append(args, value)
	}
	tag := ""
	if len(q.TagIDs) == 1 {
		tag = q.TagIDs[0]
	}
	key(`tag_id`, tag != "", tag)
	key(`category_id`, q.CategoryID != "", q.CategoryID)
	key(`is_premium`, q.IsPremium != nil, q.IsPremium != nil && *q.IsPremium)
	key(`mode`, q.Mode != "", q.Mode)
	key(`aspect`, q.Aspect != "", q.Aspect)
	return strings.Join(where, " AND "), args, true
}

// templateFilter answers the WHERE condition of q's filters and its arguments.
func templateFilter(q catalog.TemplateQuery) (cond string, args []any) {
	where := []string{live}
	if len(q.Words) > 0 {
		where, args = append(where, `c.search @@ to_tsquery('simple', ?)`), append(args, strings.Join(q.Words, ":* & ")+":*")
	}
	if q.Mode != "" {
		where, args = append(where, `c.primary_mode = ?`), append(args, q.Mode)
	}
	if q.IsPremium != nil {
		where, args = append(where, `c.is_premium = ?`), append(args, *q.IsPremium)
	}
	if q.CategoryID != "" {
		where, args = append(where, `c.category_ids @> ARRAY[?::uuid]`), append(args, q.CategoryID)
	}
	if len(q.TagIDs) > 0 {
		// The ids are uuids (bound as such by the HTTP layer); gorm would expand a slice into a
		// row, so they go as one array literal.
		where, args = append(where, `c.tag_ids @> ?::uuid[]`), append(args, "{"+strings.Join(q.TagIDs, ",")+"}")
	}
	if q.Aspect != "" {
		where, args = append(where, `c.aspects @> ARRAY[?::text]`), append(args, q.Aspect)
	}
	return strings.Join(where, " AND "), args
}

// sortOrders are the SQL orders of the catalog's sorts. Each ends with the id, so every order
// is total; Listing reads a template's place in each of them.
var sortOrders = map[string]string{
	catalog.SortNewest:  `c.created_at DESC, c.id DESC`,
	catalog.SortPopular: `c.use_count DESC, c.id DESC`,
	catalog.SortRate:    `c.rate_avg DESC, c.id DESC`,
	catalog.SortAZ:      `c.name ASC, c.id ASC`,
}

// relevance answers the order of a search for words and its arguments: the sum over the words
// of the best place each matched in (its name, keywords or description: catalog.Weight*), then
// the popular order. It is the order cache.Index computes from Listing's lexemes.
func relevance(words []string) (order string, args []any) {
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = fmt.Sprintf(`CASE WHEN ts_filter(c.search, '{a}') @@ to_tsquery('simple', ?) THEN %d
			WHEN ts_filter(c.search, '{b}') @@ to_tsquery('simple', ?) THEN %d
			WHEN ts_filter(c.search, '{c}') @@ to_tsquery('simple', ?) THEN %d ELSE 0 END`,
			catalog.WeightName, catalog.WeightKeywords, catalog.WeightDescription)
		args = append(args, w+":*", w+":*", w+":*")
	}
	return `(` + strings.Join(terms, " + ") + `) DESC, ` + sortOrders[catalog.SortPopular], args
}

// Listing reads the catalog into v as one snapshot (a read-only repeatable-read transaction),
// as an in-memory listing index needs it: every template in the popular order with its place
// in each of catalog.Sorts, the cards of the first cards of them, then every lexeme of their
// search vectors in byte order with the templates it occurs in (numbered by their row, 0
// first) and the best place it occurs in each.
func (s *Catalog) Listing(ctx context.Context, cards int, v catalog.ListingVisitor) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The sorts and the postings' grouping run in memory rather than in temporary files, and
		// these few large queries are not worth compiling.
		for _, set := range []string{`SET LOCAL work_mem = '256MB'`, `SET LOCAL jit = off`} {
			if err := tx.Exec(set).Error; err != nil {
				return fmt.Errorf("store: listing settings: %w", err)
			}
		}
		if err := listingRows(tx, v); err != nil {
			return err
		}
		if err := listingCards(tx, cards, v); err != nil {
			return err
		}
		return listingLexemes(tx, v)
	}, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
}

// listingRows reads the rows in the popular order: a row's popular place is its own number,
// the others come from a window each.
func listingRows(tx *gorm.DB, v catalog.ListingVisitor) error {
	var places []string
	for _, sort := range catalog.Sorts() {
		if sort != catalog.SortPopular {
			places = append(places, `row_number() OVER (ORDER BY `+sortOrders[sort]+`)`)
		}
	}
	rows, err := tx.Raw(`SELECT c.id, c.is_premium, c.primary_mode, array_to_string(c.aspects, ','),
			array_to_string(c.category_ids, ','), array_to_string(c.tag_ids, ','), ` + strings.Join(places, ", ") + `
		FROM containers c WHERE ` + live + ` ORDER BY ` + sortOrders[catalog.SortPopular]).Rows()
	if err != nil {
		return fmt.Errorf("store: read listing: %w", err)
	}
	defer rows.Close()
	for n := 1; rows.Next(); n++ {
		var (
			r                   catalog.ListingRow
			aspects, cats, tags string
		)
		dest := []any{&r.ID, &r.IsPremium, &r.PrimaryMode, &aspects, &cats, &tags}
		for i, sort := range catalog.Sorts() {
			if sort == catalog.SortPopular {
				r.Places[i] = n
			} else {
				dest = append(dest, &r.Places[i])
			}
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("store: read listing row: %w", err)
		}
		r.Aspects, r.CategoryIDs, r.TagIDs = splitList(aspects), splitList(cats), splitList(tags)
		if err := v.Row(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: read listing: %w", err)
	}
	return nil
}

func listingCards(tx *gorm.DB, n int, v catalog.ListingVisitor) error {
	if n <= 0 {
		return nil
	}
	rows, err := tx.Raw(`SELECT `+cardColumns+` FROM containers c WHERE `+live+
		` ORDER BY `+sortOrders[catalog.SortPopular]+` LIMIT ?`, n).Rows()
	if err != nil {
		return fmt.Errorf("store: read listing cards: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c cardRow
		if err := rows.Scan(&c.ID, &c.Slug, &c.Name, &c.Image, &c.Demo, &c.MiniDemo, &c.IsPremium, &c.IsMockup, &c.PrimaryMode,
			&c.RateAvg, &c.RateCount, &c.UseCount, &c.Aspects); err != nil {
			return fmt.Errorf("store: read listing card: %w", err)
		}
		if err := v.Card(c.toDomain()); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: read listing cards: %w", err)
	}
	return nil
}

// listingLexemes reads each lexeme's postings as one list of row*4 + weight, grouped by
// Postgres (hashed, then the lexemes sorted), so that the reader holds one lexeme at a time
// rather than the whole inversion.
func listingLexemes(tx *gorm.DB, v catalog.ListingVisitor) error {
	rows, err := tx.Raw(fmt.Sprintf(`WITH e AS MATERIALIZED (
			SELECT (row_number() OVER (ORDER BY `+sortOrders[catalog.SortPopular]+`) - 1) * 4 AS e4, c.search
			FROM containers c WHERE `+live+`)
		SELECT l, p FROM (
			SELECT u.lexeme COLLATE "C" AS l, string_agg((e.e4 + CASE WHEN 'A' = ANY(u.weights) THEN %d
				WHEN 'B' = ANY(u.weights) THEN %d WHEN 'C' = ANY(u.weights) THEN %d ELSE 0 END)::text, ',') AS p
			FROM e, unnest(e.search) u GROUP BY 1) g
		ORDER BY l`,
		catalog.WeightName, catalog.WeightKeywords, catalog.WeightDescription)).Rows()
	if err != nil {
		return fmt.Errorf("store: read listing lexemes: %w", err)
	}
	defer rows.Close()
	var (
		l        catalog.ListingLexeme
		postings sql.RawBytes // a dense lexeme's list is megabytes: read in place, not copied
		packed   []int32
	)
	for rows.Next() {
		if err := rows.Scan(&l.Text, &postings); err != nil {
			return fmt.Errorf("store: read listing lexeme: %w", err)
		}
		var err error
		if packed, err = parseInts(packed[:0], postings); err != nil {
			return fmt.Errorf("store: listing postings of %q: %w", l.Text, err)
		}
		// The aggregate keeps the rows' order in practice; SQL does not promise it.
		if !slices.IsSorted(packed) {
			slices.Sort(packed)
		}
		l.Entries, l.Weights = l.Entries[:0], l.Weights[:0]
		for _, x := range packed {
			l.Entries, l.Weights = append(l.Entries, x>>2), append(l.Weights, uint8(x&3)) // #nosec G115 -- two bits
		}
		if err := v.Lexeme(l); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: read listing lexemes: %w", err)
	}
	return nil
}

// parseInts appends the comma-separated non-negative 32-bit integers of b to to.
func parseInts(to []int32, b []byte) ([]int32, error) {
	var x int64
	digits := 0
	for i := 0; i <= len(b); i++ {
		if i == len(b) || b[i] == ',' {
			if digits == 0 {
				return nil, errors.New("an empty number")
			}
			to, x, digits = append(to, int32(x)), 0, 0 // #nosec G115 -- bounded below
			continue
		}
		if c := b[i]; c < '0' || c > '9' || x > (math.MaxInt32-9)/10 {
			return nil, errors.New("a posting that is not a 32-bit number")
		}
		x, digits = x*10+int64(b[i]-'0'), digits+1
	}
	return to, nil
}

// TemplateCards answers the cards of the templates with the given ids that are in the catalog,
// in the order of ids.
func (s *Catalog) TemplateCards(ctx context.Context, ids []string) ([]catalog.TemplateCard, error) {
	var rows []cardRow
	err := s.db.WithContext(ctx).Raw(`SELECT `+cardColumns+` FROM containers c
		WHERE c.id = ANY(?::uuid[]) AND `+live+` ORDER BY array_position(?::uuid[], c.id)`,
		"{"+strings.Join(ids, ",")+"}", "{"+strings.Join(ids, ",")+"}").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: template cards: %w", err)
	}
	return mapAll(rows, cardRow.toDomain), nil
}

// splitList splits a comma-separated list; "" is none.
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
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

// RelatedTemplates lists templates in the catalog that share categories or tags with the given
// one, ranked by the number shared, then popularity and id. It answers apperr NotFound when the
// template is not in the catalog.
func (s *Catalog) RelatedTemplates(ctx context.Context, containerID string, limit int) ([]catalog.TemplateCard, error) {
	db := s.db.WithContext(ctx)
	if err := inCatalog(db, containerID); err != nil {
		return nil, err
	}
	var rows []cardRow
	err := db.Raw(`SELECT `+cardColumns+` FROM (
			SELECT x.container_id, count(*) AS score FROM (
				SELECT b.container_id FROM container_categories a JOIN container_categories b ON b.category_id = a.category_id
				WHERE a.container_id = @id AND b.container_id <> @id
				UNION ALL
				SELECT b.container_id FROM container_tags a JOIN container_tags b ON b.tag_id = a.tag_id
				WHERE a.container_id = @id AND b.container_id <> @id
			) x GROUP BY x.container_id
		) s JOIN containers c ON c.id = s.container_id
		WHERE `+live+`
		ORDER BY s.score DESC, c.use_count DESC, c.id DESC LIMIT @limit`,
		map[string]any{"id": containerID, "limit": limit}).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: related templates: %w", err)
	}
	return mapAll(rows, cardRow.toDomain), nil
}

func mapAll[M, D any](rows []M, f func(M) D) []D {
	out := make([]D, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
