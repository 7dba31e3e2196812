package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/content-svc/internal/preview"
)

// Previews is what the handlers need of the SVG preview service.
type Previews interface {
	MaxImageBytes() int64
	Create(ctx context.Context, req preview.Request, image io.Reader) (preview.Preview, error)
	Get(ctx context.Context, id string, privileged bool) (preview.Preview, error)
	LatestForScene(ctx context.Context, sceneID string, privileged bool) (preview.Preview, error)
}

// indexedColorKey matches the form fields of one color key written field by field:
// color_keys[0][element_key] or color_keys[0].element_key.
var indexedColorKey = regexp.MustCompile(`^color_keys\[(\d{1,2})\](?:\[(\w+)\]|\.(\w+))$`)

// formColorKeys reads the color keys of a multipart form, in any of the encodings clients
// use: a JSON array in a color_keys field; color_keys (or color_keys[]) repeated, each a JSON
// object or array; or indexed fields color_keys[i][element_key] and color_keys[i][current_color].
// No color keys at all is an empty list. It returns apperr Invalid for a value that is not
// JSON of the right shape or that decodes to text holding a NUL character.
func formColorKeys(form map[string][]string) ([]preview.ColorKey, error) {
	var keys []SvgColorKey
	for _, name := range []string{"color_keys", "color_keys[]"} {
		for _, v := range form[name] {
			v = strings.TrimSpace(v)
			var err error
			switch {
			case v == "":
				continue
			case strings.HasPrefix(v, "["):
				var list []SvgColorKey
				err = json.Unmarshal([]byte(v), &list)
				keys = append(keys, list...)
			default:
				var one SvgColorKey
				err = json.Unmarshal([]byte(v), &one)
				keys = append(keys, one)
			}
			if err != nil {
				return nil, check.Invalid("color_keys", "must be a JSON array of {element_key, current_color}, or repeated JSON objects")
			}
		}
	}
	indexed := map[int]*SvgColorKey{}
	for name, vs := range form {
		m := indexedColorKey.FindStringSubmatch(name)
		if m == nil || len(vs) == 0 {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		if indexed[i] == nil {
			indexed[i] = &SvgColorKey{}
		}
		switch m[2] + m[3] {
		case "element_key":
			indexed[i].ElementKey = vs[0]
		case "current_color":
			indexed[i].CurrentColor = vs[0]
		}
	}
	for i := 0; len(indexed) > 0; i++ {
		if k, ok := indexed[i]; ok {
			keys = append(keys, *k)
			delete(indexed, i)
		} else if i > 99 {
			break
		}
	}
	out := make([]preview.ColorKey, len(keys))
	for i, k := range keys {
		if badText(k.ElementKey) || badText(k.CurrentColor) {
			return nil, check.Invalid("color_keys", textRule)
		}
		out[i] = preview.ColorKey{ElementKey: k.ElementKey, CurrentColor: k.CurrentColor}
	}
	return out, nil
}

func optionalText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toSvgPreview(p preview.Preview, imageURL string) SvgPreview {
	keys := make([]SvgColorKey, len(p.ColorKeys))
	for i, k := range p.ColorKeys {
		keys[i] = SvgColorKey{ElementKey: k.ElementKey, CurrentColor: k.CurrentColor}
	}
	detected := p.DetectedColorKeys
	if detected == nil {
		detected = []string{}
	}
	return SvgPreview{
		Id: parseID(p.ID), TargetType: SvgPreviewTargetType(p.TargetType), TargetId: parseID(p.TargetID),
		Status: SvgPreviewStatus(p.Status), ColorKeys: keys, DetectedColorKeys: detected, ImageUrl: imageURL,
		SvgUrl: optionalText(p.SVGURL), FailureReason: optionalText(p.FailureReason), Attempts: p.Attempts,
		CreatedAt: p.CreatedAt, GeneratedAt: p.GeneratedAt,
	}
}

// GenerateSvgPreview accepts an image and queues its preview.
func (h *Handler) GenerateSvgPreview(c echo.Context) error {
	limit := h.previews.MaxImageBytes() + formOverhead
	bodyLimit(c, limit)
	req := c.Request()
	if err := req.ParseMultipartForm(1 << 20); err != nil {
		return formError(err, limit)
	}
	defer func() { _ = req.MultipartForm.RemoveAll() }()
	if err := formText(req.MultipartForm.Value); err != nil {
		return err
	}
	image, _, err := req.FormFile("image")
	if err != nil {
		return check.Invalid("image", "is required")
	}
	defer image.Close()
	keys, err := formColorKeys(req.MultipartForm.Value)
	if err != nil {
		return err
	}
	in := preview.Request{TargetType: req.FormValue("target_type"), TargetID: req.FormValue("target_id"), ColorKeys: keys,
		Privileged: privileged(c), TenantID: tenantOf(c, nil)}
	p, err := h.previews.Create(req.Context(), in, image)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, SvgPreviewAccepted{SvgPreviewId: parseID(p.ID), Status: SvgPreviewAcceptedStatusGenerating})
}

// privileged reports whether the caller may read, and so preview, unpublished projects and
// scenes: administrators and services, as in the catalog's reads.
func privileged(c echo.Context) bool {
	cl := authn.FromContext(c)
	return cl != nil && (cl.Admin || cl.IsService())
}

// GetSvgPreview answers a preview.
func (h *Handler) GetSvgPreview(c echo.Context, id openapi_types.UUID) error {
	p, err := h.previews.Get(c.Request().Context(), id.String(), privileged(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSvgPreview(p, h.objectURL(p.ImageKey)))
}

// GetSceneSvgPreview answers the scene's latest preview.
func (h *Handler) GetSceneSvgPreview(c echo.Context, sceneID openapi_types.UUID) error {
	p, err := h.previews.LatestForScene(c.Request().Context(), sceneID.String(), privileged(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSvgPreview(p, h.objectURL(p.ImageKey)))
}
