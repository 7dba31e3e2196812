// Package upload puts projects' AEP source files into object storage, either streamed in one
// request or through S3 multipart uploads whose parts the client sends straight to storage,
// and records each file's URL, MD5 and size on its project. Abandoned multipart uploads are
// aborted by Sweep.
package upload

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
)

// Multipart upload states.
const (
	Started    = "started"
	Completing = "completing"
	Completed  = "completed"
	Aborted    = "aborted"
)

const (
	contentType = "application/octet-stream"
	// minPartSize is S3's smallest part size (except for the last part).
	minPartSize = 5 << 20
	// maxParts bounds the part URLs answered for one upload.
	maxParts = 1000
)

// Config bounds the uploads; see the service configuration for the meaning of each field.
type Config struct {
	MaxSingleBytes    int64
	MinMultipartBytes int64
	MaxMultipartBytes int64
	PartSizeBytes     int64
	URLTTL            time.Duration
	MaxAge            time.Duration
}

// File is a stored AEP file as recorded on its project.
type File struct {
	URL       string
	MD5       string
	SizeBytes int64
}

// Upload is a multipart upload of one project's AEP file.
type Upload struct {
	ID             string
	UploadID       string
	ProjectID      string
	ObjectKey      string
	Filename       string
	TotalSizeBytes int64
	PartSizeBytes  int64
	PartCount      int
	Status         string
	CreatedAt      time.Time
}

// Part is one part of a multipart upload; ETag is given without quotes.
type Part struct {
	Number int
	ETag   string
	Size   int64
}

// PartURL is where the client PUTs one part.
type PartURL struct {
	Number int
	URL    string
}

// Started is the answer to StartMultipart.
type Start struct {
	Upload Upload
	Bucket string
	URLs   []PartURL
}

// Store persists uploads and projects' file records.
type Store interface {
	// ProjectExists returns NotFound unless the project exists in a live container.
	ProjectExists(ctx context.Context, projectID string) error
	CreateUpload(ctx context.Context, u Upload) error
	// Upload returns the project's upload with the storage upload id, NotFound otherwise.
	Upload(ctx context.Context, projectID, uploadID string) (Upload, error)
	// SetStatus moves the upload from status from to status to, returning Conflict when it
	// is not in from.
	SetStatus(ctx context.Context, id, from, to string) error
	// Finish marks the upload completed and records f on its project in one transaction.
	Finish(ctx context.Context, u Upload, f File) error
	// SetProjectFile records f on the project, returning NotFound when it is gone.
	SetProjectFile(ctx context.Context, projectID string, f File) error
	// Stale lists up to limit uploads still started that began before before.
	Stale(ctx context.Context, before time.Time, limit int) ([]Upload, error)
}

// Objects is the object storage the files go to.
type Objects interface {
	Bucket() string
	URL(key string) string
	PutHashed(ctx context.Context, key string, r io.Reader) (md5 string, size int64, err error)
	Remove(ctx context.Context, key string) error
	StartMultipart(ctx context.Context, key, contentType string) (string, error)
	PresignPart(ctx context.Context, key, uploadID string, number int, ttl time.Duration) (string, error)
	ListParts(ctx context.Context, key, uploadID string) ([]Part, error)
	CompleteMultipart(ctx context.Context, key, uploadID string, parts []Part) error
	AbortMultipart(ctx context.Context, key, uploadID string) error
	MD5(ctx context.Context, key string) (string, int64, error)
}

// Service implements the upload rules.
type Service struct {
	cfg     Config
	store   Store
	objects Objects
	now     func() time.Time
}

// NewService returns a Service; now tells the time.
func NewService(cfg Config, store Store, objects Objects, now func() time.Time) *Service {
	return &Service{cfg: cfg, store: store, objects: objects, now: now}
}

// MaxSingleBytes is the largest file Put accepts.
func (s *Service) MaxSingleBytes() int64 { return s.cfg.MaxSingleBytes }

// IsAEP reports whether head, a file's first bytes, begins an After Effects project: a RIFX
// container of form type "Egg!".
func IsAEP(head []byte) bool {
	return len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFX")) && bytes.Equal(head[8:12], []byte("Egg!"))
}

// ErrTooLarge is returned by the reader given to Put when the file exceeds the limit.
var ErrTooLarge = errors.New("upload: file exceeds the single-request limit")

// limitedReader fails with ErrTooLarge once more than n bytes have been read.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, ErrTooLarge
	}
	return n, err
}

func newKey(projectID string) string {
	return fmt.Sprintf("aep/%s/%s.aep", projectID, uuid.Must(uuid.NewV7()).String())
}

// Put streams file, named filename, into storage while hashing it, and records it on the
// project. The file is never held in memory. A file is accepted when its name ends in .aep
// or its content begins an After Effects project. It returns NotFound for an unknown project,
// Unsupported when neither holds, TooLarge beyond the single-request limit and Unavailable
// when storage cannot be reached.
func (s *Service) Put(ctx context.Context, projectID, filename string, file io.Reader) (File, error) {
	if err := s.store.ProjectExists(ctx, projectID); err != nil {
		return File{}, err
	}
	head := make([]byte, 12)
	n, err := io.ReadFull(file, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return File{}, apperr.Wrap(err, apperr.Invalid, "unreadable_file", "the file could not be read")
	}
	if checkFilename(filename) != nil && !IsAEP(head[:n]) {
		return File{}, notAEP()
	}
	key := newKey(projectID)
	body := &limitedReader{r: io.MultiReader(bytes.NewReader(head[:n]), file), n: s.cfg.MaxSingleBytes}
	sum, size, err := s.objects.PutHashed(ctx, key, body)
	if body.n < 0 {
		_ = s.objects.Remove(context.WithoutCancel(ctx), key)
		return File{}, apperr.E(apperr.TooLarge, "file_too_large",
			fmt.Sprintf("the file is larger than the single-request limit of %d bytes; use the multipart upload", s.cfg.MaxSingleBytes))
	}
	if err != nil {
		return File{}, err
	}
	f := File{URL: s.objects.URL(key), MD5: sum, SizeBytes: size}
	if err := s.store.SetProjectFile(ctx, projectID, f); err != nil {
		_ = s.objects.Remove(context.WithoutCancel(ctx), key)
		return File{}, err
	}
	return f, nil
}

// PartSize picks the part size for a file of total bytes: the configured size, doubled
// until the file needs at most 1,000 parts, and never under S3's 5 MiB minimum.
func (s *Service) PartSize(total int64) int64 {
	size := max(s.cfg.PartSizeBytes, minPartSize)
	for (total+size-1)/size > maxParts {
		size *= 2
	}
	return size
}

// StartMultipart begins a multipart upload of the project's AEP file and presigns a URL for
// each part. It returns NotFound for an unknown project, Invalid for a name not ending in
// .aep or a size outside the configured range, and Unavailable when storage cannot be
// reached.
func (s *Service) StartMultipart(ctx context.Context, projectID, filename string, total int64) (Start, error) {
	if err := checkFilename(filename); err != nil {
		return Start{}, err
	}
	if total < s.cfg.MinMultipartBytes || total > s.cfg.MaxMultipartBytes {
		return Start{}, check.Invalid("total_size_bytes",
			fmt.Sprintf("must be between %d and %d bytes", s.cfg.MinMultipartBytes, s.cfg.MaxMultipartBytes))
	}
	if err := s.store.ProjectExists(ctx, projectID); err != nil {
		return Start{}, err
	}
	part := s.PartSize(total)
	u := Upload{
		ID: uuid.Must(uuid.NewV7()).String(), ProjectID: projectID, ObjectKey: newKey(projectID), Filename: filename,
		TotalSizeBytes: total, PartSizeBytes: part, PartCount: int((total + part - 1) / part), Status: Started,
		CreatedAt: s.now().UTC(),
	}
	id, err := s.objects.StartMultipart(ctx, u.ObjectKey, contentType)
	if err != nil {
		return Start{}, err
	}
	u.UploadID = id
	urls := make([]PartURL, u.PartCount)
	for i := range urls {
		url, err := s.objects.PresignPart(ctx, u.ObjectKey, id, i+1, s.cfg.URLTTL)
		if err != nil {
			_ = s.objects.AbortMultipart(context.WithoutCancel(ctx), u.ObjectKey, id)
			return Start{}, err
		}
		urls[i] = PartURL{Number: i + 1, URL: url}
	}
	if err := s.store.CreateUpload(ctx, u); err != nil {
		_ = s.objects.AbortMultipart(context.WithoutCancel(ctx), u.ObjectKey, id)
		return Start{}, err
	}
	return Start{Upload: u, Bucket: s.objects.Bucket(), URLs: urls}, nil
}

// CompleteMultipart checks the client's part list against the parts storage holds, assembles
// the file, streams it through MD5 and records it on the project. It returns NotFound for an
// upload id unknown for this project, Conflict when the upload is not in progress, Invalid
// when parts are missing, repeated, out of order or carry a wrong ETag, or the assembled size
// differs from the announced one, and Unavailable when storage cannot be reached. The file
// name was checked when the upload started; the content is not inspected.
func (s *Service) CompleteMultipart(ctx context.Context, projectID, uploadID string, parts []Part) (File, error) {
	u, err := s.store.Upload(ctx, projectID, uploadID)
	if err != nil {
		return File{}, err
	}
	if u.Status != Started {
		return File{}, apperr.E(apperr.Conflict, "upload_not_in_progress", "the upload is already "+u.Status)
	}
	parts = slices.Clone(parts)
	slices.SortStableFunc(parts, func(a, b Part) int { return cmp.Compare(a.Number, b.Number) })
	if err := checkPartList(parts, u.PartCount); err != nil {
		return File{}, err
	}
	stored, err := s.objects.ListParts(ctx, u.ObjectKey, u.UploadID)
	if err != nil {
		return File{}, err
	}
	if err := matchStored(parts, stored, u.TotalSizeBytes); err != nil {
		return File{}, err
	}
	if err := s.store.SetStatus(ctx, u.ID, Started, Completing); err != nil {
		return File{}, err
	}
	f, err := s.assemble(ctx, u, parts)
	if err != nil {
		_ = s.store.SetStatus(context.WithoutCancel(ctx), u.ID, Completing, Started)
		return File{}, err
	}
	return f, nil
}

func (s *Service) assemble(ctx context.Context, u Upload, parts []Part) (File, error) {
	if err := s.objects.CompleteMultipart(ctx, u.ObjectKey, u.UploadID, parts); err != nil {
		return File{}, err
	}
	sum, size, err := s.objects.MD5(ctx, u.ObjectKey)
	if err != nil {
		return File{}, err
	}
	f := File{URL: s.objects.URL(u.ObjectKey), MD5: sum, SizeBytes: size}
	if err := s.store.Finish(ctx, u, f); err != nil {
		return File{}, err
	}
	return f, nil
}

// Sweep aborts the multipart uploads started more than MaxAge ago and never completed, in
// storage and in the records, and returns how many it aborted. It returns Unavailable when
// storage cannot be reached.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	stale, err := s.store.Stale(ctx, s.now().Add(-s.cfg.MaxAge), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, u := range stale {
		if err := s.objects.AbortMultipart(ctx, u.ObjectKey, u.UploadID); err != nil {
			return n, err
		}
		if err := s.store.SetStatus(ctx, u.ID, Started, Aborted); err != nil && !apperr.Is(err, apperr.Conflict) {
			return n, err
		}
		n++
	}
	return n, nil
}

func checkFilename(name string) error {
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	if base != name || len(name) > 255 || !strings.EqualFold(path.Ext(name), ".aep") || len(name) <= len(".aep") {
		return check.Invalid("filename", "must be a file name ending in .aep, at most 255 characters")
	}
	return nil
}

func badParts(msg string) error {
	return apperr.E(apperr.Invalid, "invalid_parts", msg).WithFields(apperr.FieldError{Field: "parts", Message: msg})
}

func notAEP() error {
	return apperr.E(apperr.Unsupported, "not_aep", "the file is not an After Effects project: its name does not end in .aep and its content is not RIFX of form Egg!")
}

// checkPartList requires exactly the parts 1..count, sorted by number, each with an ETag.
func checkPartList(parts []Part, count int) error {
	if len(parts) == 0 {
		return badParts("must list the uploaded parts")
	}
	for i, p := range parts {
		if p.Number != i+1 {
			if p.Number < 1 || p.Number > count || (i > 0 && p.Number <= parts[i-1].Number) {
				return badParts("part numbers must be from 1 to " + fmt.Sprint(count) + ", without repeats")
			}
			return badParts(fmt.Sprintf("part %d is missing", i+1))
		}
		if strings.Trim(p.ETag, `"`) == "" {
			return badParts(fmt.Sprintf("part %d has no etag", p.Number))
		}
	}
	if len(parts) < count {
		return badParts(fmt.Sprintf("parts %d to %d are missing", len(parts)+1, count))
	}
	return nil
}

// matchStored checks the client's parts against the ones storage holds, and the total size.
func matchStored(parts, stored []Part, total int64) error {
	var size int64
	for _, p := range parts {
		i := slices.IndexFunc(stored, func(sp Part) bool { return sp.Number == p.Number })
		if i < 0 {
			return badParts(fmt.Sprintf("part %d was not uploaded", p.Number))
		}
		if !strings.EqualFold(strings.Trim(p.ETag, `"`), strings.Trim(stored[i].ETag, `"`)) {
			return badParts(fmt.Sprintf("part %d has the wrong etag", p.Number))
		}
		size += stored[i].Size
	}
	if size != total {
		return badParts(fmt.Sprintf("the parts hold %d bytes, not the %d announced", size, total))
	}
	return nil
}

// RunSweeper calls Sweep at start and then every interval until ctx is done, logging
// failures and carrying on; it returns nil when ctx ends.
func (s *Service) RunSweeper(ctx context.Context, every time.Duration, log *slog.Logger) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := s.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "abort stale aep uploads", "error", err)
		}
		if n > 0 {
			log.InfoContext(ctx, "aborted stale aep uploads", "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
