package httpapi

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/content-svc/internal/media"
)

// fontBodyLimit bounds a font upload request.
const fontBodyLimit = 20 << 20

// Media is what the handlers need of the media service.
type Media interface {
	Fonts(ctx context.Context) ([]media.Font, error)
	CreateFont(ctx context.Context, in media.NewFont, file io.Reader) (media.Font, error)
	DeleteFont(ctx context.Context, id string) error
	Music(ctx context.Context, f media.MusicFilter, p paging.Page) ([]media.MusicTrack, paging.Meta, error)
	CreateMusicTrack(ctx context.Context, t media.MusicTrack) (media.MusicTrack, error)
}

func toFont(f media.Font) Font {
	return Font{
		Id: parseID(f.ID), Name: f.Name, Family: f.Family, Direction: FontDirection(f.Direction), IsPremium: f.IsPremium,
		Format: FontFormat(f.Format), Url: f.URL, SizeBytes: f.SizeBytes, CreatedAt: f.CreatedAt,
	}
}

func toMusicTrack(t media.MusicTrack) MusicTrack {
	return MusicTrack{
		Id: parseID(t.ID), Title: t.Title, Artist: t.Artist, Genre: t.Genre, Mood: t.Mood, DurationSec: t.DurationSec,
		AudioUrl: t.AudioURL, CoverUrl: t.CoverURL, IsPremium: t.IsPremium, CreatedAt: t.CreatedAt,
	}
}

// ListFonts answers every font.
func (h *Handler) ListFonts(c echo.Context) error {
	fonts, err := h.media.Fonts(c.Request().Context())
	if err != nil {
		return err
	}
	data := make([]Font, len(fonts))
	for i, f := range fonts {
		data[i] = toFont(f)
	}
	return c.JSON(http.StatusOK, FontList{Data: data})
}

// CreateFont stores an uploaded font file.
func (h *Handler) CreateFont(c echo.Context) error {
	bodyLimit(c, fontBodyLimit)
	req := c.Request()
	if err := req.ParseMultipartForm(1 << 20); err != nil {
		return formError(err, fontBodyLimit)
	}
	defer func() { _ = req.MultipartForm.RemoveAll() }()
	if err := formText(req.MultipartForm.Value); err != nil {
		return err
	}
	file, _, err := req.FormFile("file")
	if err != nil {
		return check.Invalid("file", "is required")
	}
	defer file.Close()
	premium := false
	if v := req.FormValue("is_premium"); v != "" {
		if premium, err = strconv.ParseBool(v); err != nil {
			return check.Invalid("is_premium", "must be true or false")
		}
	}
	f, err := h.media.CreateFont(req.Context(), media.NewFont{
		Name: req.FormValue("name"), Family: req.FormValue("family"), Direction: req.FormValue("direction"), IsPremium: premium,
	}, file)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toFont(f))
}

// DeleteFont removes a font and its file.
func (h *Handler) DeleteFont(c echo.Context, id openapi_types.UUID) error {
	if err := h.media.DeleteFont(c.Request().Context(), id.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ListMusic answers one page of matching tracks.
func (h *Handler) ListMusic(c echo.Context, params ListMusicParams) error {
	p, err := paging.New(params.Page, params.PageSize)
	if err != nil {
		return err
	}
	f := media.MusicFilter{
		Q: deref(params.Q, ""), Genre: deref(params.Genre, ""), Mood: deref(params.Mood, ""),
		MinDuration: params.MinDuration, MaxDuration: params.MaxDuration,
	}
	tracks, meta, err := h.media.Music(c.Request().Context(), f, p)
	if err != nil {
		return err
	}
	data := make([]MusicTrack, len(tracks))
	for i, t := range tracks {
		data[i] = toMusicTrack(t)
	}
	return c.JSON(http.StatusOK, MusicTrackPage{Data: data, Meta: toMeta(meta)})
}

// CreateMusicTrack adds a track.
func (h *Handler) CreateMusicTrack(c echo.Context) error {
	var in MusicTrackCreate
	if err := httpx.Bind(c, &in); err != nil {
		return err
	}
	t, err := h.media.CreateMusicTrack(c.Request().Context(), media.MusicTrack{
		Title: in.Title, Artist: deref(in.Artist, ""), Genre: deref(in.Genre, ""), Mood: deref(in.Mood, ""),
		DurationSec: in.DurationSec, AudioURL: deref(in.AudioUrl, ""), CoverURL: deref(in.CoverUrl, ""), IsPremium: deref(in.IsPremium, false),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toMusicTrack(t))
}
