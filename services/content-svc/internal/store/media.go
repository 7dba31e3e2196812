package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/content-svc/internal/media"
)

// Media implements media.Store.
type Media struct{ db *gorm.DB }

// NewMedia returns a Media store.
func NewMedia(db *gorm.DB) *Media { return &Media{db: db} }

type fontModel struct {
	ID        string `gorm:"primaryKey"`
	Name      string
	Family    string
	Direction string
	IsPremium bool
	Format    string
	ObjectKey string
	URL       string
	SizeBytes int64
	CreatedAt time.Time
}

func (fontModel) TableName() string { return "fonts" }

func (m fontModel) toDomain() media.Font { return media.Font(m) }

type musicTrackModel struct {
	ID          string `gorm:"primaryKey"`
	Title       string
	Artist      string
	Genre       string
	Mood        string
	DurationSec float64
	AudioURL    string
	CoverURL    string
	IsPremium   bool
	CreatedAt   time.Time
}

func (musicTrackModel) TableName() string { return "music_tracks" }

// Fonts lists every font by family and name.
func (s *Media) Fonts(ctx context.Context) ([]media.Font, error) {
	var rows []fontModel
	if err := s.db.WithContext(ctx).Order("family, name, id").Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "font")
	}
	out := make([]media.Font, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// Font returns one font. It returns NotFound for an unknown id.
func (s *Media) Font(ctx context.Context, id string) (media.Font, error) {
	var row fontModel
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return media.Font{}, pgdb.Translate(err, "font")
	}
	return row.toDomain(), nil
}

// CreateFont inserts f.
func (s *Media) CreateFont(ctx context.Context, f media.Font) error {
	return pgdb.Translate(s.db.WithContext(ctx).Create(fontModel(f)).Error, "font")
}

// DeleteFont deletes the font's row. It returns NotFound when there is none.
func (s *Media) DeleteFont(ctx context.Context, id string) error {
	return removeFileRow(ctx, s.db, &fontModel{}, id, "font")
}

// Music lists the matching tracks by title, one page at a time, with the total.
func (s *Media) Music(ctx context.Context, f media.MusicFilter, p paging.Page) ([]media.MusicTrack, int, error) {
	q := s.db.WithContext(ctx).Model(&musicTrackModel{})
	if f.Q != "" {
		q = q.Where("lower(title || ' ' || artist) LIKE ?", "%"+likeLiteral(strings.ToLower(f.Q))+"%")
	}
	if f.Genre != "" {
		q = q.Where("lower(genre) = lower(?)", f.Genre)
	}
	if f.Mood != "" {
		q = q.Where("lower(mood) = lower(?)", f.Mood)
	}
	if f.MinDuration != nil {
		q = q.Where("duration_sec >= ?", *f.MinDuration)
	}
	if f.MaxDuration != nil {
		q = q.Where("duration_sec <= ?", *f.MaxDuration)
	}
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, pgdb.Translate(err, "music track")
	}
	var rows []musicTrackModel
	if err := q.Order("title, id").Offset(p.Offset()).Limit(p.Size).Find(&rows).Error; err != nil {
		return nil, 0, pgdb.Translate(err, "music track")
	}
	out := make([]media.MusicTrack, len(rows))
	for i, r := range rows {
		out[i] = media.MusicTrack(r)
	}
	return out, int(total), nil
}

// CreateMusicTrack inserts t.
func (s *Media) CreateMusicTrack(ctx context.Context, t media.MusicTrack) error {
	return pgdb.Translate(s.db.WithContext(ctx).Create(musicTrackModel(t)).Error, "music track")
}

// removeFileRow deletes the row of model with id, returning NotFound naming what when none.
func removeFileRow(ctx context.Context, db *gorm.DB, model any, id, what string) error {
	res := db.WithContext(ctx).Where("id = ?", id).Delete(model)
	if res.Error != nil {
		return pgdb.Translate(res.Error, what)
	}
	if res.RowsAffected == 0 {
		return pgdb.Translate(gorm.ErrRecordNotFound, what)
	}
	return nil
}

// likeLiteral escapes LIKE's wildcards so that user text matches literally.
func likeLiteral(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
