package store

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/content-svc/internal/site"
)

// Site implements site.Store.
type Site struct{ db *gorm.DB }

// NewSite returns a Site store.
func NewSite(db *gorm.DB) *Site { return &Site{db: db} }

type blogModel struct {
	ID          string `gorm:"primaryKey"`
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

func (blogModel) TableName() string { return "blogs" }

type commentModel struct {
	ID              string `gorm:"primaryKey"`
	Content         string
	Rate            *float64
	BlogID          *string
	ContainerID     *string
	ParentCommentID *string
	AuthorID        string
	Status          string
	DecidedAt       *time.Time
	CreatedAt       time.Time
}

func (commentModel) TableName() string { return "comments" }

func (m commentModel) toDomain() site.Comment {
	return site.Comment{
		ID: m.ID, Content: m.Content, Rate: m.Rate, BlogID: deref(m.BlogID), ContainerID: deref(m.ContainerID),
		ParentCommentID: deref(m.ParentCommentID), AuthorID: m.AuthorID, Status: m.Status, CreatedAt: m.CreatedAt,
	}
}

func toCommentModel(c site.Comment) commentModel {
	return commentModel{
		ID: c.ID, Content: c.Content, Rate: c.Rate, BlogID: ref(c.BlogID), ContainerID: ref(c.ContainerID),
		ParentCommentID: ref(c.ParentCommentID), AuthorID: c.AuthorID, Status: c.Status, CreatedAt: c.CreatedAt,
	}
}

type slideModel struct {
	ID        string `gorm:"primaryKey"`
	Title     string
	Subtitle  string
	ImageURL  string
	LinkURL   string
	Position  int
	IsActive  bool
	CreatedAt time.Time
}

func (slideModel) TableName() string { return "slides" }

type homeEventModel struct {
	ID          string `gorm:"primaryKey"`
	Title       string
	Description string
	ImageURL    string
	LinkURL     string
	StartsAt    time.Time
	EndsAt      *time.Time
	Position    int
	CreatedAt   time.Time
}

func (homeEventModel) TableName() string { return "home_events" }

type siteSettingsModel struct {
	TenantID  string `gorm:"primaryKey"`
	Public    []byte `gorm:"type:jsonb"`
	Private   []byte `gorm:"type:jsonb"`
	UpdatedAt time.Time
}

func (siteSettingsModel) TableName() string { return "site_settings" }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ref(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Blogs lists published posts: by rank for q (prefix match on each word), else newest first.
func (s *Site) Blogs(ctx context.Context, q string, p paging.Page) ([]site.Blog, int, error) {
	db := s.db.WithContext(ctx).Model(&blogModel{}).Where("is_published")
	order := any("published_at DESC, id DESC")
	if tsq := prefixQuery(q); tsq != "" {
		db = db.Where("search @@ to_tsquery('simple', ?)", tsq)
		order = clause.OrderBy{Expression: clause.Expr{
			SQL: "ts_rank(search, to_tsquery('simple', ?)) DESC, published_at DESC, id DESC", Vars: []any{tsq}, WithoutParentheses: true,
		}}
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, pgdb.Translate(err, "blog")
	}
	var rows []blogModel
	if err := db.Order(order).Offset(p.Offset()).Limit(p.Size).Find(&rows).Error; err != nil {
		return nil, 0, pgdb.Translate(err, "blog")
	}
	out := make([]site.Blog, len(rows))
	for i, r := range rows {
		out[i] = site.Blog(r)
	}
	return out, int(total), nil
}

// PublishedBlog returns a published post by slug. It returns NotFound when there is none.
func (s *Site) PublishedBlog(ctx context.Context, slug string) (site.Blog, error) {
	var row blogModel
	if err := s.db.WithContext(ctx).Where("slug = ? AND is_published", slug).Take(&row).Error; err != nil {
		return site.Blog{}, pgdb.Translate(err, "blog")
	}
	return site.Blog(row), nil
}

// CreateBlog inserts b. It returns Conflict for a taken slug.
func (s *Site) CreateBlog(ctx context.Context, b site.Blog) error {
	err := s.db.WithContext(ctx).Omit("search").Create(blogModel(b)).Error
	if pgdb.IsUniqueViolation(err, "blogs_slug_key") {
		return apperr.E(apperr.Conflict, "slug_taken", "a blog post with this slug already exists")
	}
	return pgdb.Translate(err, "blog")
}

// DeleteBlog deletes a post by slug, its comments with it. It returns NotFound when there is
// none.
func (s *Site) DeleteBlog(ctx context.Context, slug string) error {
	res := s.db.WithContext(ctx).Where("slug = ?", slug).Delete(&blogModel{})
	if res.Error != nil {
		return pgdb.Translate(res.Error, "blog")
	}
	if res.RowsAffected == 0 {
		return pgdb.Translate(gorm.ErrRecordNotFound, "blog")
	}
	return nil
}

// CreateComment checks that the target, when there is one, exists (a container that is not
// deleted, or a published post) and that the parent is a comment on the same target, then
// inserts c. It returns NotFound otherwise.
func (s *Site) CreateComment(ctx context.Context, c site.Comment) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		n := int64(1)
		var err error
		switch {
		case c.BlogID != "":
			err = tx.Table("blogs").Where("id = ? AND is_published", c.BlogID).Count(&n).Error
		case c.ContainerID != "":
			err = tx.Table("containers").Where("id = ? AND deleted_at IS NULL", c.ContainerID).Count(&n).Error
		}
		if err != nil {
			return pgdb.Translate(err, "comment target")
		}
		if n == 0 {
			return apperr.E(apperr.NotFound, "target_not_found", "the blog post or template to comment on does not exist")
		}
		if c.ParentCommentID != "" {
			if err := tx.Model(&commentModel{}).Where("id = ? AND blog_id IS NOT DISTINCT FROM ? AND container_id IS NOT DISTINCT FROM ?",
				c.ParentCommentID, ref(c.BlogID), ref(c.ContainerID)).Count(&n).Error; err != nil {
				return pgdb.Translate(err, "comment")
			}
			if n == 0 {
				return apperr.E(apperr.NotFound, "parent_not_found", "the parent comment does not exist on this target")
			}
		}
		return pgdb.Translate(tx.Create(toCommentModel(c)).Error, "comment")
	})
}

// Comments lists a target's approved comments, oldest first.
func (s *Site) Comments(ctx context.Context, t site.Target, p paging.Page) ([]site.Comment, int, error) {
	db := s.db.WithContext(ctx).Model(&commentModel{}).Where("status = ?", site.Approved)
	switch {
	case t.BlogID != "":
		db = db.Where("blog_id = ?", t.BlogID)
	case t.ContainerID != "":
		db = db.Where("container_id = ?", t.ContainerID)
	default:
		db = db.Where("blog_id IS NULL AND container_id IS NULL")
	}
	return s.commentPage(db, p)
}

// PendingComments lists the comments waiting for approval, oldest first.
func (s *Site) PendingComments(ctx context.Context, p paging.Page) ([]site.Comment, int, error) {
	return s.commentPage(s.db.WithContext(ctx).Model(&commentModel{}).Where("status = ?", site.Pending), p)
}

func (s *Site) commentPage(db *gorm.DB, p paging.Page) ([]site.Comment, int, error) {
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, pgdb.Translate(err, "comment")
	}
	var rows []commentModel
	if err := db.Order("created_at, id").Offset(p.Offset()).Limit(p.Size).Find(&rows).Error; err != nil {
		return nil, 0, pgdb.Translate(err, "comment")
	}
	out := make([]site.Comment, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, int(total), nil
}

// DecideComment moves a pending comment to status. Approving a rated comment on a container
// recomputes the container's rate_avg and rate_count from its approved rated comments in the
// same transaction. It returns NotFound for an unknown comment and Conflict when it is not
// pending.
func (s *Site) DecideComment(ctx context.Context, id, status string) (site.Comment, error) {
	var out site.Comment
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var row commentModel
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&row).Error; err != nil {
			return pgdb.Translate(err, "comment")
		}
		if row.Status != site.Pending {
			return apperr.E(apperr.Conflict, "comment_decided", "the comment is already "+row.Status)
		}
		now := time.Now().UTC()
		if err := tx.Model(&row).Updates(map[string]any{"status": status, "decided_at": now}).Error; err != nil {
			return pgdb.Translate(err, "comment")
		}
		row.Status = status
		if status == site.Approved && row.Rate != nil && row.ContainerID != nil {
			if err := tx.Exec(`UPDATE containers c SET rate_avg = r.avg, rate_count = r.n, updated_at = now()
				FROM (SELECT coalesce(avg(rate), 0) AS avg, count(*) AS n FROM comments
				      WHERE container_id = ? AND status = 'approved' AND rate IS NOT NULL) r
				WHERE c.id = ?`, *row.ContainerID, *row.ContainerID).Error; err != nil {
				return pgdb.Translate(err, "container rating")
			}
		}
		out = row.toDomain()
		return nil
	})
	return out, err
}

// Slides lists the active slides by position.
func (s *Site) Slides(ctx context.Context) ([]site.Slide, error) {
	var rows []slideModel
	if err := s.db.WithContext(ctx).Where("is_active").Order("position, created_at, id").Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "slide")
	}
	out := make([]site.Slide, len(rows))
	for i, r := range rows {
		out[i] = site.Slide(r)
	}
	return out, nil
}

// CreateSlide inserts sl.
func (s *Site) CreateSlide(ctx context.Context, sl site.Slide) error {
	return pgdb.Translate(s.db.WithContext(ctx).Create(slideModel(sl)).Error, "slide")
}

// DeleteSlide deletes a slide. It returns NotFound when there is none.
func (s *Site) DeleteSlide(ctx context.Context, id string) error {
	return removeFileRow(ctx, s.db, &slideModel{}, id, "slide")
}

// HomeEvents lists the events not ended at now, by position then start.
func (s *Site) HomeEvents(ctx context.Context, now time.Time) ([]site.HomeEvent, error) {
	var rows []homeEventModel
	if err := s.db.WithContext(ctx).Where("ends_at IS NULL OR ends_at > ?", now).
		Order("position, starts_at, id").Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "home event")
	}
	out := make([]site.HomeEvent, len(rows))
	for i, r := range rows {
		out[i] = site.HomeEvent(r)
	}
	return out, nil
}

// CreateHomeEvent inserts e.
func (s *Site) CreateHomeEvent(ctx context.Context, e site.HomeEvent) error {
	return pgdb.Translate(s.db.WithContext(ctx).Create(homeEventModel(e)).Error, "home event")
}

// DeleteHomeEvent deletes an event. It returns NotFound when there is none.
func (s *Site) DeleteHomeEvent(ctx context.Context, id string) error {
	return removeFileRow(ctx, s.db, &homeEventModel{}, id, "home event")
}

// Settings returns the tenant's settings, empty when none are stored.
func (s *Site) Settings(ctx context.Context, tenantID string) (site.Settings, error) {
	var rows []siteSettingsModel
	if err := s.db.WithContext(ctx).Where("tenant_id = ?", tenantID).Limit(1).Find(&rows).Error; err != nil {
		return site.Settings{}, pgdb.Translate(err, "settings")
	}
	st := site.Settings{Public: map[string]any{}, Private: map[string]any{}}
	if len(rows) == 0 {
		return st, nil
	}
	if err := json.Unmarshal(rows[0].Public, &st.Public); err != nil {
		return st, apperr.Wrap(err, apperr.Internal, "", "decode settings")
	}
	if err := json.Unmarshal(rows[0].Private, &st.Private); err != nil {
		return st, apperr.Wrap(err, apperr.Internal, "", "decode settings")
	}
	return st, nil
}

// PutSettings stores the tenant's settings, replacing any.
func (s *Site) PutSettings(ctx context.Context, tenantID string, st site.Settings) error {
	pub, err := json.Marshal(st.Public)
	if err != nil {
		return apperr.Wrap(err, apperr.Invalid, "invalid_public", "public must be a JSON object")
	}
	priv, err := json.Marshal(st.Private)
	if err != nil {
		return apperr.Wrap(err, apperr.Invalid, "invalid_private", "private must be a JSON object")
	}
	row := siteSettingsModel{TenantID: tenantID, Public: pub, Private: priv, UpdatedAt: time.Now().UTC()}
	return pgdb.Translate(s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"public", "private", "updated_at"}),
	}).Create(&row).Error, "settings")
}

// prefixQuery turns free text into a to_tsquery expression that ANDs every word as a prefix,
// so that partly typed words match. Anything but letters and digits separates words, which
// also keeps tsquery operators out of the expression.
func prefixQuery(q string) string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		words[i] = w + ":*"
	}
	return strings.Join(words, " & ")
}
