package store

import (
	"context"
	"errors"
	"io"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/blob"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/content-svc/internal/upload"
)

// Uploads implements upload.Store.
type Uploads struct{ db *gorm.DB }

// NewUploads returns an Uploads store.
func NewUploads(db *gorm.DB) *Uploads { return &Uploads{db: db} }

type aepUploadModel struct {
	ID             string `gorm:"primaryKey"`
	UploadID       string
	ProjectID      string
	ObjectKey      string
	Filename       string
	TotalSizeBytes int64
	PartSizeBytes  int64
	PartCount      int
	Status         string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (aepUploadModel) TableName() string { return "aep_uploads" }

func (m aepUploadModel) toDomain() upload.Upload {
	return upload.Upload{
		ID: m.ID, UploadID: m.UploadID, ProjectID: m.ProjectID, ObjectKey: m.ObjectKey, Filename: m.Filename,
		TotalSizeBytes: m.TotalSizeBytes, PartSizeBytes: m.PartSizeBytes, PartCount: m.PartCount, Status: m.Status,
		CreatedAt: m.CreatedAt,
	}
}

// ProjectExists returns NotFound unless the project exists in a live container.
func (s *Uploads) ProjectExists(ctx context.Context, projectID string) error {
	var n int64
	err := s.db.WithContext(ctx).Table("projects p").Joins("JOIN containers c ON c.id = p.container_id").
		Where("p.id = ? AND c.deleted_at IS NULL", projectID).Count(&n).Error
	if err != nil {
		return pgdb.Translate(err, "project")
	}
	if n == 0 {
		return apperr.E(apperr.NotFound, "project_not_found", "project not found")
	}
	return nil
}

// CreateUpload inserts u.
func (s *Uploads) CreateUpload(ctx context.Context, u upload.Upload) error {
	m := aepUploadModel{
		ID: u.ID, UploadID: u.UploadID, ProjectID: u.ProjectID, ObjectKey: u.ObjectKey, Filename: u.Filename,
		TotalSizeBytes: u.TotalSizeBytes, PartSizeBytes: u.PartSizeBytes, PartCount: u.PartCount, Status: u.Status,
		CreatedAt: u.CreatedAt, UpdatedAt: u.CreatedAt,
	}
	return pgdb.Translate(s.db.WithContext(ctx).Create(&m).Error, "upload")
}

// Upload returns the project's upload with the storage upload id. It returns NotFound when
// the id is unknown or belongs to another project.
func (s *Uploads) Upload(ctx context.Context, projectID, uploadID string) (upload.Upload, error) {
	var row aepUploadModel
	err := s.db.WithContext(ctx).Where("upload_id = ? AND project_id = ?", uploadID, projectID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return upload.Upload{}, apperr.E(apperr.NotFound, "upload_not_found", "no upload with this upload_id exists for this project")
	}
	if err != nil {
		return upload.Upload{}, pgdb.Translate(err, "upload")
	}
	return row.toDomain(), nil
}

// SetStatus moves the upload from one status to another. It returns Conflict when the upload
// is not in from.
func (s *Uploads) SetStatus(ctx context.Context, id, from, to string) error {
	return setUploadStatus(s.db.WithContext(ctx), id, from, to)
}

func setUploadStatus(db *gorm.DB, id, from, to string) error {
	res := db.Model(&aepUploadModel{}).Where("id = ? AND status = ?", id, from).
		Updates(map[string]any{"status": to, "updated_at": time.Now().UTC()})
	if res.Error != nil {
		return pgdb.Translate(res.Error, "upload")
	}
	if res.RowsAffected == 0 {
		return apperr.E(apperr.Conflict, "upload_not_in_progress", "the upload is no longer "+from)
	}
	return nil
}

// Finish marks the upload completed and records f on its project in one transaction.
func (s *Uploads) Finish(ctx context.Context, u upload.Upload, f upload.File) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := setUploadStatus(tx, u.ID, upload.Completing, upload.Completed); err != nil {
			return err
		}
		return setProjectFile(tx, u.ProjectID, f)
	})
}

// SetProjectFile records f on the project. It returns NotFound when the project is gone.
func (s *Uploads) SetProjectFile(ctx context.Context, projectID string, f upload.File) error {
	return setProjectFile(s.db.WithContext(ctx), projectID, f)
}

func setProjectFile(db *gorm.DB, projectID string, f upload.File) error {
	res := db.Table("projects").Where("id = ?", projectID).Updates(map[string]any{
		"aep_file_url": f.URL, "aep_file_md5": f.MD5, "aep_file_size_bytes": f.SizeBytes, "updated_at": time.Now().UTC(),
	})
	if res.Error != nil {
		return pgdb.Translate(res.Error, "project")
	}
	if res.RowsAffected == 0 {
		return apperr.E(apperr.NotFound, "project_not_found", "project not found")
	}
	return nil
}

// Stale lists up to limit uploads still started that began before before, oldest first.
func (s *Uploads) Stale(ctx context.Context, before time.Time, limit int) ([]upload.Upload, error) {
	var rows []aepUploadModel
	if err := s.db.WithContext(ctx).Where("status = ? AND created_at < ?", upload.Started, before).
		Order("created_at").Limit(limit).Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "upload")
	}
	out := make([]upload.Upload, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// UploadObjects adapts the blob store to upload.Objects.
type UploadObjects struct{ store *blob.Store }

// NewUploadObjects returns an UploadObjects over s.
func NewUploadObjects(s *blob.Store) *UploadObjects { return &UploadObjects{store: s} }

// Bucket is the bucket the files go to.
func (o *UploadObjects) Bucket() string { return o.store.Bucket() }

// URL is the object's canonical URL.
func (o *UploadObjects) URL(key string) string { return o.store.URL(key) }

// AEPLinks turns the stored (private) URL of an AEP file into a short-lived presigned GET URL
// for a caller who may see the project.
type AEPLinks struct {
	store *blob.Store
	ttl   time.Duration
}

// NewAEPLinks returns AEPLinks over s whose URLs work for ttl.
func NewAEPLinks(s *blob.Store, ttl time.Duration) *AEPLinks { return &AEPLinks{store: s, ttl: ttl} }

// TTL is how long the URLs Download answers work.
func (l *AEPLinks) TTL() time.Duration { return l.ttl }

// Download answers a presigned GET URL for the object stored at storedURL; an empty URL stays
// empty and a URL outside the bucket is answered unchanged. It returns the blob store's errors.
func (l *AEPLinks) Download(ctx context.Context, storedURL string) (string, error) {
	key, ok := l.store.KeyOf(storedURL)
	if !ok {
		return storedURL, nil
	}
	return l.store.PresignGet(ctx, key, l.ttl)
}

// PutHashed streams r of unknown length into key, hashing it on the way.
func (o *UploadObjects) PutHashed(ctx context.Context, key string, r io.Reader) (string, int64, error) {
	info, sum, err := o.store.PutHashed(ctx, key, r, -1, "application/octet-stream")
	return sum, info.Size, err
}

// Remove deletes the object.
func (o *UploadObjects) Remove(ctx context.Context, key string) error {
	return o.store.Remove(ctx, key)
}

// StartMultipart begins a multipart upload.
func (o *UploadObjects) StartMultipart(ctx context.Context, key, contentType string) (string, error) {
	return o.store.StartMultipart(ctx, key, contentType)
}

// PresignPart presigns the PUT of one part.
func (o *UploadObjects) PresignPart(ctx context.Context, key, uploadID string, number int, ttl time.Duration) (string, error) {
	return o.store.PresignPart(ctx, key, uploadID, number, ttl)
}

// ListParts lists the parts storage holds.
func (o *UploadObjects) ListParts(ctx context.Context, key, uploadID string) ([]upload.Part, error) {
	parts, err := o.store.ListParts(ctx, key, uploadID)
	if err != nil {
		return nil, err
	}
	out := make([]upload.Part, len(parts))
	for i, p := range parts {
		out[i] = upload.Part(p)
	}
	return out, nil
}

// CompleteMultipart assembles the object from parts.
func (o *UploadObjects) CompleteMultipart(ctx context.Context, key, uploadID string, parts []upload.Part) error {
	bp := make([]blob.Part, len(parts))
	for i, p := range parts {
		bp[i] = blob.Part(p)
	}
	_, err := o.store.CompleteMultipart(ctx, key, uploadID, bp)
	return err
}

// AbortMultipart discards an upload.
func (o *UploadObjects) AbortMultipart(ctx context.Context, key, uploadID string) error {
	return o.store.AbortMultipart(ctx, key, uploadID)
}

// MD5 streams the object through MD5.
func (o *UploadObjects) MD5(ctx context.Context, key string) (string, int64, error) {
	return o.store.MD5(ctx, key)
}
