package blob

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/motionstudio/platform/pkg/apperr"
)

// maxPartNumber is the highest part number S3 accepts.
const maxPartNumber = 10000

// StartMultipart begins a multipart upload of the object at key and returns its upload id.
// It returns Invalid for a malformed key, Unavailable when the store cannot be reached and
// Internal for other failures.
func (s *Store) StartMultipart(ctx context.Context, key, contentType string) (string, error) {
	id, err := s.core.NewMultipartUpload(ctx, s.bucket, key, minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return "", translate(err, "start multipart upload of "+key)
	}
	return id, nil
}

// PresignPart returns a URL that accepts one PUT of part partNumber (1 to 10000) of the upload
// without credentials until ttl has passed; the response's ETag header is what
// CompleteMultipart needs for that part. It returns Invalid for a bad part number, key or ttl
// and Internal for other failures.
func (s *Store) PresignPart(ctx context.Context, key, uploadID string, partNumber int, ttl time.Duration) (string, error) {
	if partNumber < 1 || partNumber > maxPartNumber {
		return "", apperr.Invalidf("part number must be between 1 and %d", maxPartNumber)
	}
	if uploadID == "" {
		return "", apperr.Invalidf("upload id is required")
	}
	params := url.Values{
		"partNumber": {strconv.Itoa(partNumber)},
		"uploadId":   {uploadID},
	}
	u, err := s.client.Presign(ctx, http.MethodPut, s.bucket, key, ttl, params)
	if err != nil {
		return "", translate(err, fmt.Sprintf("presign part %d of %s", partNumber, key))
	}
	return u.String(), nil
}

// ListParts returns every part uploaded so far, in part-number order, reading all pages. It
// returns NotFound when the upload does not exist, Unavailable when the store cannot be reached
// and Internal for other failures.
func (s *Store) ListParts(ctx context.Context, key, uploadID string) ([]Part, error) {
	var parts []Part
	marker := 0
	for {
		res, err := s.core.ListObjectParts(ctx, s.bucket, key, uploadID, marker, 1000)
		if err != nil {
			return nil, translate(err, "list parts of "+key)
		}
		for _, p := range res.ObjectParts {
			parts = append(parts, Part{Number: p.PartNumber, ETag: trimETag(p.ETag), Size: p.Size})
		}
		if !res.IsTruncated || res.NextPartNumberMarker <= marker {
			return parts, nil
		}
		marker = res.NextPartNumberMarker
	}
}

// CompleteMultipart assembles the object from parts, which must be listed in ascending part
// number with the ETags the part uploads answered, and returns the assembled object's info.
// It returns NotFound when the upload does not exist, Invalid when a part is missing, an ETag
// does not match, the order is wrong or a part other than the last is under 5 MiB,
// Unavailable when the store cannot be reached and Internal for other failures.
func (s *Store) CompleteMultipart(ctx context.Context, key, uploadID string, parts []Part) (ObjectInfo, error) {
	if len(parts) == 0 {
		return ObjectInfo{}, apperr.E(apperr.Invalid, "invalid_part", "at least one part is required to complete the upload")
	}
	complete := make([]minio.CompletePart, len(parts))
	for i, p := range parts {
		complete[i] = minio.CompletePart{PartNumber: p.Number, ETag: trimETag(p.ETag)}
	}
	if _, err := s.core.CompleteMultipartUpload(ctx, s.bucket, key, uploadID, complete, minio.PutObjectOptions{}); err != nil {
		return ObjectInfo{}, translate(err, "complete multipart upload of "+key)
	}
	return s.Stat(ctx, key)
}

// AbortMultipart discards the upload and the parts sent so far. Aborting an upload that no
// longer exists succeeds, as it does on MinIO, so cleanup can be retried. It returns
// Unavailable when the store cannot be reached and Internal for other failures.
func (s *Store) AbortMultipart(ctx context.Context, key, uploadID string) error {
	err := s.core.AbortMultipartUpload(ctx, s.bucket, key, uploadID)
	if err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchUpload {
		return translate(err, "abort multipart upload of "+key)
	}
	return nil
}

// ListIncompleteUploads returns the uploads under prefix that were started and neither
// completed nor aborted. MinIO only matches a prefix that is a whole object key, so pass the
// key of the object whose uploads you want. It returns Unavailable when the store cannot be
// reached and Internal for other failures.
func (s *Store) ListIncompleteUploads(ctx context.Context, prefix string) ([]Upload, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var uploads []Upload
	for u := range s.client.ListIncompleteUploads(ctx, s.bucket, prefix, true) {
		if u.Err != nil {
			return nil, translate(u.Err, "list incomplete uploads under "+prefix)
		}
		uploads = append(uploads, Upload{Key: u.Key, UploadID: u.UploadID, Initiated: u.Initiated})
	}
	return uploads, nil
}

func trimETag(etag string) string { return strings.Trim(etag, `"`) }
