package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/services/content-svc/internal/check"
	"github.com/motionstudio/platform/services/content-svc/internal/preview"
)

// Previews is what the handlers need of the SVG preview service.
type Previews interface {
	MaxImageBytes() int64
	Create(ctx context.Context, req preview.Request, image io.Reader) (preview.Preview, error)
	Get(ctx context.Context, id string) (preview.Preview, error)
	LatestForScene(ctx context.Context, sceneID string) (preview.Preview, error)
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
	image, _, err := req.FormFile("image")
	if err != nil {
		return check.Invalid("image", "is required")
	}
	defer image.Close()
	var keys []SvgColorKey
	if err := json.Unmarshal([]byte(req.FormValue("color_keys")), &keys); err != nil {
		return check.Invalid("color_keys", "must be a JSON array of {element_key, current_color}")
	}
	in := preview.Request{TargetType: req.FormValue("target_type"), TargetID: req.FormValue("target_id")}
	for _, k := range keys {
		in.ColorKeys = append(in.ColorKeys, preview.ColorKey{ElementKey: k.ElementKey, CurrentColor: k.CurrentColor})
	}
	p, err := h.previews.Create(req.Context(), in, image)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, SvgPreviewAccepted{SvgPreviewId: parseID(p.ID), Status: SvgPreviewAcceptedStatusGenerating})
}

// GetSvgPreview answers a preview.
func (h *Handler) GetSvgPreview(c echo.Context, id openapi_types.UUID) error {
	p, err := h.previews.Get(c.Request().Context(), id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSvgPreview(p, h.objectURL(p.ImageKey)))
}

// GetSceneSvgPreview answers the scene's latest preview.
func (h *Handler) GetSceneSvgPreview(c echo.Context, sceneID openapi_types.UUID) error {
	p, err := h.previews.LatestForScene(c.Request().Context(), sceneID.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSvgPreview(p, h.objectURL(p.ImageKey)))
}
