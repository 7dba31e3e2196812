// Package media holds the fonts and music tracks that templates use: fonts are files in
// object storage whose type is decided by their content, music tracks are catalog records.
package media

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/paging"
)

// Font is an uploaded font file.
type Font struct {
	ID        string
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

// NewFont is what an administrator gives with a font file.
type NewFont struct {
	Name      string
	Family    string
	Direction string
	IsPremium bool
}

// MusicTrack is a piece of music a video can use.
type MusicTrack struct {
	ID          string
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

// MusicFilter narrows the music list; empty fields do not filter.
type MusicFilter struct {
	Q           string
	Genre       string
	Mood        string
	MinDuration *float64
	MaxDuration *float64
}

// Store persists fonts and music tracks.
type Store interface {
	Fonts(ctx context.Context) ([]Font, error)
	Font(ctx context.Context, id string) (Font, error)
	CreateFont(ctx context.Context, f Font) error
	DeleteFont(ctx context.Context, id string) error
	Music(ctx context.Context, f MusicFilter, p paging.Page) ([]MusicTrack, int, error)
	CreateMusicTrack(ctx context.Context, t MusicTrack) error
}

// Objects stores font files.
type Objects interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	Remove(ctx context.Context, key string) error
	URL(key string) string
}

// Service implements the font and music rules.
type Service struct {
	store   Store
	objects Objects
}

// NewService returns a Service.
func NewService(store Store, objects Objects) *Service {
	return &Service{store: store, objects: objects}
}

// Fonts lists every font by family and name.
func (s *Service) Fonts(ctx context.Context) ([]Font, error) { return s.store.Fonts(ctx) }

// CreateFont checks the fields and that the file parses as a font, stores the file and records
// the font. It returns Invalid for
// bad fields, Unsupported when the file is not a TTF, OTF, WOFF or WOFF2 font, and
// Unavailable when storage cannot be reached.
func (s *Service) CreateFont(ctx context.Context, in NewFont, file io.Reader) (Font, error) {
	if in.Direction == "" {
		in.Direction = "ltr"
	}
	var c check.Checker
	c.Length("name", in.Name, 1, 200)
	c.Length("family", in.Family, 1, 200)
	c.OneOf("direction", &in.Direction, []string{"ltr", "rtl"})
	if err := c.Err(); err != nil {
		return Font{}, err
	}
	data, err := io.ReadAll(file)
	if err != nil {
		return Font{}, apperr.Wrap(err, apperr.Invalid, "unreadable_file", "the font file could not be read")
	}
	format, contentType, ok := ParseFontFormat(data)
	if !ok {
		return Font{}, apperr.E(apperr.Unsupported, "unsupported_font", "the file is not a TTF, OTF, WOFF or WOFF2 font")
	}
	f := Font{
		ID: uuid.Must(uuid.NewV7()).String(), Name: strings.TrimSpace(in.Name), Family: strings.TrimSpace(in.Family),
		Direction: in.Direction, IsPremium: in.IsPremium, Format: format, SizeBytes: int64(len(data)), CreatedAt: time.Now().UTC(),
	}
	f.ObjectKey = fmt.Sprintf("fonts/%s.%s", f.ID, format)
	f.URL = s.objects.URL(f.ObjectKey)
	if err := s.objects.Put(ctx, f.ObjectKey, bytes.NewReader(data), int64(len(data)), contentType); err != nil {
		return Font{}, err
	}
	if err := s.store.CreateFont(ctx, f); err != nil {
		_ = s.objects.Remove(context.WithoutCancel(ctx), f.ObjectKey)
		return Font{}, err
	}
	return f, nil
}

// DeleteFont removes the font's file and then its record, so a failed call can be retried.
// It returns NotFound for an unknown font and Unavailable when storage cannot be reached.
func (s *Service) DeleteFont(ctx context.Context, id string) error {
	f, err := s.store.Font(ctx, id)
	if err != nil {
		return err
	}
	if err := s.objects.Remove(ctx, f.ObjectKey); err != nil {
		return err
	}
	return s.store.DeleteFont(ctx, id)
}

// Music lists the tracks that match f, by title, one page at a time. It returns Invalid
// for a duration that is not a finite number or a bad duration range.
func (s *Service) Music(ctx context.Context, f MusicFilter, p paging.Page) ([]MusicTrack, paging.Meta, error) {
	f.Q, f.Genre, f.Mood = strings.TrimSpace(f.Q), strings.TrimSpace(f.Genre), strings.TrimSpace(f.Mood)
	var c check.Checker
	c.Finite("min_duration", f.MinDuration)
	c.Finite("max_duration", f.MaxDuration)
	if err := c.Err(); err != nil {
		return nil, paging.Meta{}, err
	}
	if f.MinDuration != nil && f.MaxDuration != nil && *f.MinDuration > *f.MaxDuration {
		return nil, paging.Meta{}, check.Invalid("min_duration", "must not exceed max_duration")
	}
	tracks, total, err := s.store.Music(ctx, f, p)
	if err != nil {
		return nil, paging.Meta{}, err
	}
	return tracks, p.Meta(total), nil
}

// CreateMusicTrack records a track. It returns Invalid for bad fields.
func (s *Service) CreateMusicTrack(ctx context.Context, t MusicTrack) (MusicTrack, error) {
	var c check.Checker
	c.Length("title", t.Title, 1, 200)
	c.Length("artist", t.Artist, 0, 200)
	c.Length("genre", t.Genre, 0, 100)
	c.Length("mood", t.Mood, 0, 100)
	c.URL("audio_url", t.AudioURL, false)
	c.URL("cover_url", t.CoverURL, false)
	if t.DurationSec <= 0 || t.DurationSec > 24*3600 {
		c.Add("duration_sec", "must be more than 0 and at most 86400")
	}
	if err := c.Err(); err != nil {
		return MusicTrack{}, err
	}
	t.ID = uuid.Must(uuid.NewV7()).String()
	t.CreatedAt = time.Now().UTC()
	if err := s.store.CreateMusicTrack(ctx, t); err != nil {
		return MusicTrack{}, err
	}
	return t, nil
}
