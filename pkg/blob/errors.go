package blob

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/minio/minio-go/v7"

	"github.com/motionstudio/platform/pkg/apperr"
)

// translate classifies a storage failure of op as an apperr kind, keeping the cause.
func translate(err error, op string) error {
	cause := fmt.Errorf("blob: %s: %w", op, err)
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		switch resp.Code {
		case minio.NoSuchKey:
			return apperr.Wrap(cause, apperr.NotFound, "object_not_found", "file not found")
		case minio.NoSuchUpload:
			return apperr.Wrap(cause, apperr.NotFound, "upload_not_found", "upload not found; it may have been completed or aborted")
		case minio.InvalidPart:
			return apperr.Wrap(cause, apperr.Invalid, "invalid_part", "one or more parts were not uploaded or their etags do not match")
		case minio.InvalidPartOrder:
			return apperr.Wrap(cause, apperr.Invalid, "invalid_part_order", "parts must be listed in ascending order of part number without repeats")
		case minio.EntityTooSmall:
			return apperr.Wrap(cause, apperr.Invalid, "part_too_small", "every part except the last must be at least 5 MiB")
		case minio.MalformedXML:
			return apperr.Wrap(cause, apperr.Invalid, "invalid_part", "the list of parts is malformed")
		case minio.InvalidArgument:
			return apperr.Wrap(cause, apperr.Invalid, "invalid_argument", "invalid object key or argument")
		}
		if resp.StatusCode >= 500 {
			return apperr.Wrap(cause, apperr.Unavailable, "storage_unavailable", "object storage is unavailable")
		}
		return apperr.Wrap(cause, apperr.Internal, "", "object storage error")
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) {
		return apperr.Wrap(cause, apperr.Unavailable, "storage_unavailable", "object storage is unavailable")
	}
	return apperr.Wrap(cause, apperr.Internal, "", "object storage error")
}
