// Package httpapi is content-svc's HTTP adapter for files and site content (operations tagged
// Uploads, SvgPreviews, Media, Site and RenderServers). The catalog's operations live in the
// subpackage catalogapi, generated from the same api/openapi.yaml.
package httpapi

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/paging"
)

// Handler implements ServerInterface.
type Handler struct {
	render   RenderServers
	media    Media
	site     Site
	uploads  Uploads
	previews Previews
	// objectURL is the public URL of a stored public object (preview sources).
	objectURL func(key string) string
	aep       AEPLinks
}

// AEPLinks turns a stored AEP file URL into a short-lived URL the caller can download.
type AEPLinks interface {
	Download(ctx context.Context, storedURL string) (string, error)
}

// Deps are the domain services the handlers call.
type Deps struct {
	Render   RenderServers
	Media    Media
	Site     Site
	Uploads  Uploads
	Previews Previews
	// ObjectURL is the public URL of a stored public object.
	ObjectURL func(key string) string
	// AEP presigns AEP file URLs.
	AEP AEPLinks
}

// NewHandler returns a Handler over d.
func NewHandler(d Deps) *Handler {
	return &Handler{
		render: d.Render, media: d.Media, site: d.Site, uploads: d.Uploads, previews: d.Previews, objectURL: d.ObjectURL,
		aep: d.AEP,
	}
}

// Policies says who may call each operation of this package.
func Policies(v *authn.Verifier) httpx.Policies {
	anyone := httpx.Allow(v.UserOrService())
	admin := httpx.Allow(v.RequireAdmin())
	return httpx.Policies{
		"listProjectServers":      httpx.Allow(v.RequireService()),
		"listProjectServersAdmin": admin,
		"createProjectServer":     admin,
		"getProjectServer":        admin,
		"updateProjectServer":     admin,
		"deleteProjectServer":     admin,

		"listFonts":        anyone,
		"createFont":       admin,
		"deleteFont":       admin,
		"listMusic":        anyone,
		"createMusicTrack": admin,

		"listBlogs":           anyone,
		"getBlog":             anyone,
		"createBlog":          admin,
		"deleteBlog":          admin,
		"listComments":        anyone,
		"createComment":       anyone,
		"listPendingComments": admin,
		"approveComment":      admin,
		"rejectComment":       admin,
		"listSlides":          anyone,
		"createSlide":         admin,
		"deleteSlide":         admin,
		"listHomeEvents":      anyone,
		"createHomeEvent":     admin,
		"deleteHomeEvent":     admin,
		"getPublicSettings":   anyone,
		"getSettings":         admin,
		"putSettings":         admin,

		"putProjectAep":     admin,
		"startAepUpload":    admin,
		"completeAepUpload": admin,

		"generateSvgPreview": anyone,
		"getSvgPreview":      anyone,
		"getSceneSvgPreview": anyone,
	}
}

// largeBodyRoutes are the streaming uploads, which enforce their own size limits.
var largeBodyRoutes = map[string]string{
	"/v1/fonts":                    http.MethodPost,
	"/v1/projects/:project_id/aep": http.MethodPut,
	"/v1/svg-previews/generate":    http.MethodPost,
}

// LargeBody reports the routes of this package that stream their bodies and so are exempt
// from the server's body limit and request timeout; each enforces its own limit.
func LargeBody(c echo.Context) bool {
	m, ok := largeBodyRoutes[c.Path()]
	return ok && m == c.Request().Method
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

func toMeta(m paging.Meta) PaginationMeta {
	return PaginationMeta{Page: m.Page, PageSize: m.PageSize, Total: m.Total, HasMore: m.HasMore}
}

// parseID turns a stored id into the wire's UUID; stored ids are always UUIDs.
func parseID(s string) uuid.UUID { return uuid.MustParse(s) }

// optionalID is the wire form of an optional id.
func optionalID(s string) *uuid.UUID {
	if s == "" {
		return nil
	}
	id := uuid.MustParse(s)
	return &id
}

func idString(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// bodyLimit caps the request body at limit bytes.
func bodyLimit(c echo.Context, limit int64) {
	c.Request().Body = http.MaxBytesReader(c.Response().Writer, c.Request().Body, limit)
}

// formError maps a multipart parsing failure: an over-long body is TooLarge, anything else
// Invalid.
func formError(err error, limit int64) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return apperr.E(apperr.TooLarge, "too_large", "the request body is larger than "+humanBytes(limit))
	}
	return apperr.Wrap(err, apperr.Invalid, "invalid_multipart", "the body must be multipart/form-data")
}

// badText reports whether s holds a NUL character or is not valid UTF-8: text no column
// stores (Postgres refuses both, in text and in jsonb).
func badText(s string) bool {
	return strings.ContainsRune(s, 0) || !utf8.ValidString(s)
}

// textRule is the rule a field breaks when it holds bad text.
const textRule = "must be valid UTF-8 text without NUL characters"

// formText refuses a form whose field names or values hold bad text, as the server refuses
// it in JSON bodies and query strings, with an apperr Invalid naming the first such field.
func formText(values map[string][]string) error {
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if badText(name) {
			return check.Invalid("form", "field names "+textRule)
		}
		for _, v := range values[name] {
			if badText(v) {
				return check.Invalid(name, textRule)
			}
		}
	}
	return nil
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	default:
		return strconv.FormatInt(n, 10) + " bytes"
	}
}
