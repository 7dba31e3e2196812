package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/pkg/jobs/pgjobs"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

// States of a password-reset job.
const (
	resetQueued     = "Queued"
	resetProcessing = "Processing"
	resetDone       = "Done"
)

// resetJobs is the job table of accepted password-reset requests: a request is Queued for a
// worker and Processing under its lease; a finished one is deleted.
var resetJobs = pgjobs.Table{
	Name: "password_reset_jobs", Key: "id", Ready: []string{resetQueued}, Leased: resetProcessing,
	Attempts: "attempt", Touched: "touched_at",
}

// resetCandidates bounds the queued requests Next tries to claim in one call.
const resetCandidates = 10

// ResetJobs implements auth.ResetJobs on the password_reset_jobs table.
type ResetJobs struct{ db *gorm.DB }

// NewResetJobs returns the password-reset job store over db.
func NewResetJobs(db *gorm.DB) *ResetJobs { return &ResetJobs{db: db} }

type resetJobRow struct {
	ID, TenantSlug, Email, Phone string
	Status                       string
	Attempt                      int
	CreatedAt                    time.Time
}

func (resetJobRow) TableName() string { return "password_reset_jobs" }

// Add queues the request j.
func (s *ResetJobs) Add(ctx context.Context, j auth.ResetJob) error {
	row := resetJobRow{ID: j.ID, TenantSlug: j.TenantSlug, Email: j.Email, Phone: j.Phone, Status: resetQueued, CreatedAt: j.CreatedAt}
	return pgdb.Translate(s.db.WithContext(ctx).Create(&row).Error, "password reset job")
}

// Next leases the oldest queued request it can claim to owner for length; jobs.ErrNoWork when
// none is waiting.
func (s *ResetJobs) Next(ctx context.Context, owner string, length time.Duration) (*auth.ResetJob, jobs.Lease, error) {
	var ids []string
	err := s.db.WithContext(ctx).Raw(`SELECT id FROM password_reset_jobs WHERE status = ? ORDER BY touched_at LIMIT ?`,
		resetQueued, resetCandidates).Scan(&ids).Error
	if err != nil {
		return nil, jobs.Lease{}, pgdb.Translate(err, "password reset jobs")
	}
	for _, id := range ids {
		l, err := resetJobs.Claim(ctx, s.db, id, owner, length)
		var held jobs.HeldError
		if errors.Is(err, jobs.ErrNoWork) || errors.As(err, &held) {
			continue
		}
		if err != nil {
			return nil, l, err
		}
		var row resetJobRow
		if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
			return nil, l, pgdb.Translate(err, "password reset job")
		}
		return &auth.ResetJob{ID: row.ID, TenantSlug: row.TenantSlug, Email: row.Email, Phone: row.Phone, CreatedAt: row.CreatedAt}, l, nil
	}
	return nil, jobs.Lease{}, jobs.ErrNoWork
}

// Renew extends the lease l; jobs.ErrLeaseLost when it no longer holds the request.
func (s *ResetJobs) Renew(ctx context.Context, l jobs.Lease) error {
	return resetJobs.Renew(ctx, s.db, l)
}

// Release gives the request back, leased to nobody; Requeue queues it again once it is stale.
func (s *ResetJobs) Release(ctx context.Context, l jobs.Lease) error {
	return resetJobs.Release(ctx, s.db, l)
}

// Finish deletes the answered request if l still holds it; otherwise it changes nothing and
// returns jobs.ErrLeaseLost.
func (s *ResetJobs) Finish(ctx context.Context, l jobs.Lease) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := resetJobs.Finish(ctx, tx, l, resetDone, nil); err != nil {
			return err
		}
		return pgdb.Translate(tx.Exec("DELETE FROM password_reset_jobs WHERE id = ?", l.ID).Error, "password reset job")
	})
}

// Requeue queues again up to limit requests whose worker's lease lapsed or that were released
// and untouched for stale before now; it returns how many. Workers find queued requests by
// polling, so no wake-up is written.
func (s *ResetJobs) Requeue(ctx context.Context, now time.Time, stale time.Duration, limit int) (int, error) {
	var due []resetJobRow
	return resetJobs.Requeue(ctx, s.db, now.Add(-stale), limit, &due, func(*gorm.DB) error { return nil })
}

// ResetQueueQuery measures the password-reset requests waiting for a worker (Queued) or held by
// one (Processing), for pgdb.NewJobQueueCollector, from the password_reset_jobs_due_idx partial
// index; both states are answered, empty or not.
const ResetQueueQuery = `SELECT 'password_reset_jobs', s.status, count(j.id)::float8,
	COALESCE(EXTRACT(EPOCH FROM now() - min(j.created_at)), 0)::float8
	FROM (VALUES ('Queued'), ('Processing')) AS s (status)
	LEFT JOIN password_reset_jobs j ON j.status = s.status
	GROUP BY s.status`
