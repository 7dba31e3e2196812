package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/content-svc/internal/upload"
)

const (
	// formOverhead is what a multipart envelope may add around the single AEP file.
	formOverhead = 1 << 20
	// longUpload is how long one streamed AEP upload may keep its connection.
	longUpload = 2 * time.Hour
)

// Uploads is what the handlers need of the AEP upload service.
type Uploads interface {
	MaxSingleBytes() int64
	Put(ctx context.Context, projectID, filename string, file io.Reader) (upload.File, error)
	StartMultipart(ctx context.Context, projectID, filename string, total int64) (upload.Start, error)
	CompleteMultipart(ctx context.Context, projectID, uploadID string, parts []upload.Part) (upload.File, error)
}

// PutProjectAep streams the request's file part to storage.
func (h *Handler) PutProjectAep(c echo.Context, projectID openapi_types.UUID) error {
	httpx.AllowLongRequest(c, longUpload)
	limit := h.uploads.MaxSingleBytes() + formOverhead
	bodyLimit(c, limit)
	mr, err := c.Request().MultipartReader()
	if err != nil {
		return formError(err, limit)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return check.Invalid("file", "is required")
		}
		if err != nil {
			return formError(err, limit)
		}
		if part.FormName() != "file" {
			continue
		}
		f, err := h.uploads.Put(c.Request().Context(), projectID.String(), part.FileName(), part)
		if err != nil {
			return err
		}
		link, err := h.aep.Download(c.Request().Context(), f.URL)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, AepFile{AepFileUrl: link, AepFileMd5: f.MD5, AepFileSizeBytes: f.SizeBytes})
	}
}

// StartAepUpload begins a multipart upload and answers its presigned part URLs.
func (h *Handler) StartAepUpload(c echo.Context, projectID openapi_types.UUID) error {
	var in AepUploadStart
	if err := httpx.Bind(c, &in); err != nil {
		return err
	}
	st, err := h.uploads.StartMultipart(c.Request().Context(), projectID.String(), in.Filename, in.TotalSizeBytes)
	if err != nil {
		return err
	}
	out := AepUploadStarted{
		UploadId: st.Upload.UploadID, Bucket: st.Bucket, Key: st.Upload.ObjectKey, ChunkSizeBytes: st.Upload.PartSizeBytes,
	}
	out.PartUrls = make([]struct {
		PartNumber int    `json:"part_number"`
		Url        string `json:"url"`
	}, len(st.URLs))
	for i, u := range st.URLs {
		out.PartUrls[i].PartNumber, out.PartUrls[i].Url = u.Number, u.URL
	}
	return c.JSON(http.StatusCreated, out)
}

// CompleteAepUpload completes a multipart upload and registers the file.
func (h *Handler) CompleteAepUpload(c echo.Context, projectID openapi_types.UUID) error {
	var in AepUploadComplete
	if err := httpx.Bind(c, &in); err != nil {
		return err
	}
	if in.UploadId == "" {
		return check.Invalid("upload_id", "is required")
	}
	parts := make([]upload.Part, len(in.Parts))
	for i, p := range in.Parts {
		parts[i] = upload.Part{Number: p.PartNumber, ETag: p.Etag}
	}
	// Hashing 3 GB outlasts the server's request deadline (HTTP_REQUEST_TIMEOUT), so the work
	// gets its own deadline; the connection's deadlines are extended to match.
	httpx.AllowLongRequest(c, longUpload)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), longUpload)
	defer cancel()
	f, err := h.uploads.CompleteMultipart(ctx, projectID.String(), in.UploadId, parts)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, AepUploadCompleted{AepFileMd5: f.MD5, AepFileSizeBytes: f.SizeBytes})
}
