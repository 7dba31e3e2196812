package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/blob"
	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/pkg/jobs/pgjobs"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	contentv1 "github.com/motionstudio/platform/proto-events/gen/content/v1"
	"github.com/motionstudio/platform/services/content-svc/internal/preview"
)

// Previews implements preview.Store; it queues jobs and writes events through the outbox.
type Previews struct {
	db     *gorm.DB
	outbox *outbox.Writer
}

// NewPreviews returns a Previews store writing to the outbox through w.
func NewPreviews(db *gorm.DB, w *outbox.Writer) *Previews { return &Previews{db: db, outbox: w} }

type svgPreviewModel struct {
	ID                string `gorm:"primaryKey"`
	TargetType        string
	TargetID          string
	TenantID          string
	ColorKeys         []byte `gorm:"type:jsonb"`
	ImageKey          string
	ImageContentType  string
	Status            string
	SVGKey            string `gorm:"column:svg_key"`
	SVGURL            string `gorm:"column:svg_url"`
	FailureReason     string
	DetectedColorKeys []byte `gorm:"type:jsonb"`
	Attempts          int
	LeaseOwner        string
	LeaseUntil        *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	GeneratedAt       *time.Time
}

func (svgPreviewModel) TableName() string { return "svg_previews" }

type colorKeyJSON struct {
	ElementKey   string `json:"element_key"`
	CurrentColor string `json:"current_color"`
}

func (m svgPreviewModel) toDomain() (preview.Preview, error) {
	p := preview.Preview{
		ID: m.ID, TargetType: m.TargetType, TargetID: m.TargetID, TenantID: m.TenantID, ImageKey: m.ImageKey,
		ImageContentType: m.ImageContentType,
		Status:           m.Status, SVGKey: m.SVGKey, SVGURL: m.SVGURL, FailureReason: m.FailureReason, Attempts: m.Attempts,
		CreatedAt: m.CreatedAt, GeneratedAt: m.GeneratedAt,
	}
	var keys []colorKeyJSON
	if err := json.Unmarshal(m.ColorKeys, &keys); err != nil {
		return p, apperr.Wrap(err, apperr.Internal, "", "decode svg preview color keys")
	}
	for _, k := range keys {
		p.ColorKeys = append(p.ColorKeys, preview.ColorKey{ElementKey: k.ElementKey, CurrentColor: k.CurrentColor})
	}
	if err := json.Unmarshal(m.DetectedColorKeys, &p.DetectedColorKeys); err != nil {
		return p, apperr.Wrap(err, apperr.Internal, "", "decode svg preview detected keys")
	}
	return p, nil
}

// TargetExists returns NotFound unless the project or the scene exists and the caller may read
// it: its container is live and, unless privileged, both the container and the project are
// published (the rule of the project and scene reads).
func (s *Previews) TargetExists(ctx context.Context, targetType, targetID string, privileged bool) error {
	q := `SELECT count(*) FROM projects p JOIN containers c ON c.id = p.container_id WHERE p.id = ? AND ` + visible(privileged)
	if targetType == preview.TargetScene {
		q = `SELECT count(*) FROM scenes s` + projectJoin + ` WHERE s.id = ? AND ` + visible(privileged)
	}
	var n int64
	if err := s.db.WithContext(ctx).Raw(q, targetID).Scan(&n).Error; err != nil {
		return pgdb.Translate(err, targetType)
	}
	if n == 0 {
		return apperr.E(apperr.NotFound, "target_not_found", "the "+targetType+" does not exist")
	}
	return nil
}

// TargetColorKeys returns the color elements of a scene, or of every scene of a project (the
// first by scene order for each key), with their default colors, at most limit of them.
func (s *Previews) TargetColorKeys(ctx context.Context, targetType, targetID string, limit int) ([]preview.ColorKey, error) {
	var rows []struct {
		Key          string
		DefaultColor string
	}
	q := `SELECT key, default_color FROM scene_colors WHERE scene_id = ? ORDER BY position, id LIMIT ?`
	if targetType == preview.TargetProject {
		q = `SELECT key, default_color FROM (
			SELECT DISTINCT ON (e.key) e.key, e.default_color, s.position AS scene_position, e.position
			FROM scene_colors e JOIN scenes s ON s.id = e.scene_id
			WHERE s.project_id = ? ORDER BY e.key, s.position, e.position) k
			ORDER BY scene_position, position, key LIMIT ?`
	}
	if err := s.db.WithContext(ctx).Raw(q, targetID, limit).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: read color elements of %s %s: %w", targetType, targetID, err)
	}
	keys := make([]preview.ColorKey, len(rows))
	for i, r := range rows {
		keys[i] = preview.ColorKey{ElementKey: r.Key, CurrentColor: r.DefaultColor}
	}
	return keys, nil
}

// Create inserts p and queues its job in the same transaction.
func (s *Previews) Create(ctx context.Context, p preview.Preview) error {
	keys := make([]colorKeyJSON, len(p.ColorKeys))
	for i, k := range p.ColorKeys {
		keys[i] = colorKeyJSON{ElementKey: k.ElementKey, CurrentColor: k.CurrentColor}
	}
	rawKeys, err := json.Marshal(keys)
	if err != nil {
		return apperr.Wrap(err, apperr.Internal, "", "encode svg preview color keys")
	}
	m := svgPreviewModel{
		ID: p.ID, TargetType: p.TargetType, TargetID: p.TargetID, TenantID: p.TenantID, ColorKeys: rawKeys, ImageKey: p.ImageKey,
		ImageContentType: p.ImageContentType, Status: p.Status, DetectedColorKeys: []byte("[]"),
		CreatedAt: p.CreatedAt, UpdatedAt: p.CreatedAt,
	}
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := tx.Create(&m).Error; err != nil {
			return pgdb.Translate(err, "svg preview")
		}
		return s.queue(ctx, tx, p.ID, p.TenantID)
	})
}

func (s *Previews) queue(ctx context.Context, tx *gorm.DB, id, tenantID string) error {
	_, err := s.outbox.Add(ctx, tx, events.SubjectSvgPreviewJob, events.SubjectSvgPreviewJob,
		&contentv1.SvgPreviewJob{PreviewId: id, TenantId: tenantID})
	return err
}

// Get returns a preview. It returns NotFound for an unknown id.
func (s *Previews) Get(ctx context.Context, id string, privileged bool) (preview.Preview, error) {
	var row svgPreviewModel
	err := s.db.WithContext(ctx).Raw(`SELECT v.* FROM svg_previews v`+previewTargetJoin+` WHERE v.id = ? AND `+visible(privileged), id).
		Take(&row).Error
	if err != nil {
		return preview.Preview{}, pgdb.Translate(err, "svg preview")
	}
	return row.toDomain()
}

// previewTargetJoin joins a preview v to the project p (its target, or its target scene's) and
// to that project's container c, for the visibility condition.
const previewTargetJoin = ` JOIN projects p ON p.id = CASE WHEN v.target_type = 'scene'
	THEN (SELECT sc.project_id FROM scenes sc WHERE sc.id = v.target_id) ELSE v.target_id END
	JOIN containers c ON c.id = p.container_id`

// LatestForScene returns the newest preview of a scene the caller may read. It returns
// NotFound for a scene the caller may not read, the same as for an unknown one, and when the
// scene has no preview.
func (s *Previews) LatestForScene(ctx context.Context, sceneID string, privileged bool) (preview.Preview, error) {
	if err := s.TargetExists(ctx, preview.TargetScene, sceneID, privileged); err != nil {
		return preview.Preview{}, err
	}
	var row svgPreviewModel
	err := s.db.WithContext(ctx).Where("target_type = ? AND target_id = ?", preview.TargetScene, sceneID).
		Order("created_at DESC, id DESC").Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return preview.Preview{}, apperr.E(apperr.NotFound, "no_svg_preview", "no svg preview was generated for this scene yet")
	}
	if err != nil {
		return preview.Preview{}, pgdb.Translate(err, "svg preview")
	}
	return row.toDomain()
}

// previewJobs is the job table of the previews: a preview is its own job, Generating until it
// is finished.
var previewJobs = pgjobs.Table{
	Name: "svg_previews", Key: "id", Ready: []string{preview.Generating}, Leased: preview.Generating,
	Attempts: "attempts", Touched: "updated_at",
}

// Claim leases a Generating preview to owner for length and counts the attempt; it returns
// jobs.ErrNoWork when the preview is finished or unknown and a jobs.HeldError while another
// worker's lease is live.
func (s *Previews) Claim(ctx context.Context, id, owner string, length time.Duration) (preview.Preview, jobs.Lease, error) {
	l, err := previewJobs.Claim(ctx, s.db, id, owner, length)
	if err != nil {
		return preview.Preview{}, l, err
	}
	var row svgPreviewModel
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return preview.Preview{}, l, pgdb.Translate(err, "svg preview")
	}
	p, err := row.toDomain()
	return p, l, err
}

// Renew extends the lease l; jobs.ErrLeaseLost when it no longer holds the preview.
func (s *Previews) Renew(ctx context.Context, l jobs.Lease) error {
	return previewJobs.Renew(ctx, s.db, l)
}

// Release gives the lease l back; jobs.ErrLeaseLost when it no longer holds the preview.
func (s *Previews) Release(ctx context.Context, l jobs.Lease) error {
	return previewJobs.Release(ctx, s.db, l)
}

// Finish records p's terminal state and its generated event in one transaction if l still
// holds the preview; otherwise it changes nothing and returns jobs.ErrLeaseLost.
func (s *Previews) Finish(ctx context.Context, l jobs.Lease, p preview.Preview) error {
	detected, err := json.Marshal(nonNil(p.DetectedColorKeys))
	if err != nil {
		return apperr.Wrap(err, apperr.Internal, "", "encode svg preview detected keys")
	}
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		err := previewJobs.Finish(ctx, tx, l, p.Status, map[string]any{
			"svg_key": p.SVGKey, "svg_url": p.SVGURL, "failure_reason": p.FailureReason,
			"detected_color_keys": detected, "generated_at": p.GeneratedAt,
		})
		if err != nil {
			return err
		}
		ev := &contentv1.SvgPreviewGenerated{
			PreviewId: p.ID, TargetType: p.TargetType, TargetId: p.TargetID, Status: p.Status, SvgUrl: p.SVGURL,
			FailureReason: p.FailureReason, ColorKeys: p.DetectedColorKeys, TenantId: p.TenantID,
		}
		if p.GeneratedAt != nil {
			ev.GeneratedAt = timestamppb.New(*p.GeneratedAt)
		}
		_, err = s.outbox.Add(ctx, tx, events.SubjectSvgPreviewGenerated, events.SubjectSvgPreviewGenerated, ev)
		return err
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Requeue queues a new job for up to limit previews Generating whose lease lapsed, or with no
// lease and not touched since before, and returns how many it queued.
func (s *Previews) Requeue(ctx context.Context, before time.Time, limit int) (int, error) {
	var stale []struct{ ID, TenantID string }
	return previewJobs.Requeue(ctx, s.db, before, limit, &stale, func(tx *gorm.DB) error {
		for _, p := range stale {
			if err := s.queue(ctx, tx, p.ID, p.TenantID); err != nil {
				return err
			}
		}
		return nil
	})
}

// PreviewObjects adapts the blob store to preview.Objects.
type PreviewObjects struct{ *Objects }

// NewPreviewObjects returns a PreviewObjects over s.
func NewPreviewObjects(s *blob.Store) *PreviewObjects { return &PreviewObjects{Objects: NewObjects(s)} }

// Read reads the whole object at key, refusing objects over limit bytes.
func (o *PreviewObjects) Read(ctx context.Context, key string, limit int64) ([]byte, error) {
	rc, info, err := o.Store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if info.Size > limit {
		return nil, apperr.E(apperr.TooLarge, "object_too_large", "the stored image is larger than the limit")
	}
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, apperr.Wrap(err, apperr.Unavailable, "", "read "+key)
	}
	return data, nil
}

// PreviewQueueQuery measures the SVG preview jobs still generating, for
// pgdb.NewJobQueueCollector, from the svg_previews_generating_idx partial index.
const PreviewQueueQuery = `SELECT 'svg_previews', 'Generating', count(*)::float8,
	COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8
	FROM svg_previews WHERE status = 'Generating'`
