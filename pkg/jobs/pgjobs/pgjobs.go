// Package pgjobs keeps jobs in Postgres, each job's row the truth: a worker claims the row with
// a lease, renews, releases or finishes it only while its claim (fenced by the attempt number)
// still holds it, and Requeue wakes the jobs whose worker died, whose wake-up was lost or whose
// retry is due, so that a job is never lost and never held by two workers.
package pgjobs

import (
	"context"
	"maps"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/pkg/pgdb"
)

// Table describes a job table. Besides the columns it names, every job table has status (text),
// lease_owner (text) and lease_until (timestamptz, NULL while no worker holds the job).
type Table struct {
	// Name is the table and Key the column that identifies a job.
	Name, Key string
	// Ready are the states a worker may claim; Requeue puts jobs back in the first one.
	Ready []string
	// Leased is the state of a claimed job, possibly one of Ready; a job in it whose lease
	// lapsed or was released may be claimed again.
	Leased string
	// Attempts is the integer column counting claims; Touched the timestamp column set by
	// every change.
	Attempts, Touched string
	// Scheduled, when set, is the state of a job waiting for a retry at the time in the
	// DueAt column.
	Scheduled, DueAt string
}

// Claim leases the job id to owner for length and counts the attempt, in one statement on db
// (the pool or the caller's transaction). It returns jobs.HeldError while another worker's
// lease on it is live, and jobs.ErrNoWork when it is not waiting for a worker.
func (t Table) Claim(ctx context.Context, db *gorm.DB, id, owner string, length time.Duration) (jobs.Lease, error) {
	var rows []struct {
		Attempt    int
		LeaseUntil time.Time
	}
	err := db.WithContext(ctx).Raw(`UPDATE `+t.Name+` SET status = ?, lease_owner = ?, lease_until = now() + ? * interval '1 microsecond',
			`+t.Attempts+` = `+t.Attempts+` + 1, `+t.Touched+` = now()
		WHERE `+t.Key+` = ? AND ((status IN ? AND status <> ?) OR (status = ? AND (lease_until IS NULL OR lease_until < now())))
		RETURNING `+t.Attempts+` AS attempt, lease_until`,
		t.Leased, owner, length.Microseconds(), id, t.Ready, t.Leased, t.Leased).Scan(&rows).Error
	if err != nil {
		return jobs.Lease{}, pgdb.Translate(err, "job")
	}
	if len(rows) == 1 {
		return jobs.Lease{ID: id, Owner: owner, Attempt: rows[0].Attempt, Until: rows[0].LeaseUntil, Length: length}, nil
	}
	var held []time.Time
	err = db.WithContext(ctx).Raw(`SELECT lease_until FROM `+t.Name+` WHERE `+t.Key+` = ? AND status = ? AND lease_until >= now()`,
		id, t.Leased).Scan(&held).Error
	if err != nil {
		return jobs.Lease{}, pgdb.Translate(err, "job")
	}
	if len(held) > 0 {
		return jobs.Lease{}, jobs.HeldError{Until: held[0]}
	}
	return jobs.Lease{}, jobs.ErrNoWork
}

// Renew extends l by its length from now; jobs.ErrLeaseLost when l no longer holds the job.
func (t Table) Renew(ctx context.Context, db *gorm.DB, l jobs.Lease) error {
	return t.change(ctx, db, l, map[string]any{"lease_until": gorm.Expr("now() + ? * interval '1 microsecond'", l.Length.Microseconds())})
}

// Release gives the job back, leased to nobody, so that its redelivered wake-up claims it at
// once; jobs.ErrLeaseLost when l no longer holds the job.
func (t Table) Release(ctx context.Context, db *gorm.DB, l jobs.Lease) error {
	return t.change(ctx, db, l, map[string]any{"lease_until": nil, t.Touched: gorm.Expr("now()")})
}

// Finish moves the job to status with the columns in set (its outcome), ending the lease, in
// tx, the transaction that also records the rest of the outcome (events on the outbox, related
// rows). It returns jobs.ErrLeaseLost, changing nothing, when l no longer holds the job.
func (t Table) Finish(ctx context.Context, tx *gorm.DB, l jobs.Lease, status string, set map[string]any) error {
	cols := map[string]any{"status": status, "lease_until": nil, t.Touched: gorm.Expr("now()")}
	maps.Copy(cols, set)
	return t.change(ctx, tx, l, cols)
}

// Holds is an SQL condition true while l holds its job, with its arguments, for a statement
// that writes the job's related rows only under the lease (an INSERT ... SELECT ... WHERE or an
// UPDATE ... WHERE): the statement and the lease's end are one atomic check.
func (t Table) Holds(l jobs.Lease) (string, []any) {
	return `EXISTS (SELECT 1 FROM ` + t.Name + ` WHERE ` + t.held() + `)`, []any{l.ID, l.Owner, l.Attempt, t.Leased}
}

// held is the condition on a job's row that l, given as its id, owner, attempt and the leased
// state, holds it.
func (t Table) held() string {
	return t.Key + " = ? AND lease_owner = ? AND " + t.Attempts + " = ? AND status = ?"
}

// change sets cols on the job if l still holds it.
func (t Table) change(ctx context.Context, db *gorm.DB, l jobs.Lease, cols map[string]any) error {
	res := db.WithContext(ctx).Table(t.Name).Where(t.held(), l.ID, l.Owner, l.Attempt, t.Leased).Updates(cols)
	if res.Error != nil {
		return pgdb.Translate(res.Error, "job")
	}
	if res.RowsAffected == 0 {
		return jobs.ErrLeaseLost
	}
	return nil
}

// Requeue puts back in the first Ready state, leased to nobody, up to limit jobs that need a
// new wake-up (a lapsed lease, a job waiting with no lease untouched since staleBefore, a due
// retry), skipping rows another transaction holds; it scans their rows into dst, a pointer to
// a slice, and calls wake in the same transaction to write the wake-ups. It returns how many
// jobs it requeued.
func (t Table) Requeue(ctx context.Context, db *gorm.DB, staleBefore time.Time, limit int, dst any, wake func(tx *gorm.DB) error) (int, error) {
	due, args := "", []any{t.Ready[0], t.Leased, t.Ready, t.Leased, staleBefore}
	if t.Scheduled != "" {
		due, args = ` OR (status = ? AND `+t.DueAt+` <= now())`, append(args, t.Scheduled)
	}
	n := 0
	err := pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
		res := tx.Raw(`UPDATE `+t.Name+` SET status = ?, lease_until = NULL, `+t.Touched+` = now()
			WHERE `+t.Key+` IN (SELECT `+t.Key+` FROM `+t.Name+`
				WHERE (status = ? AND lease_until < now())
					OR ((status IN ? OR status = ?) AND lease_until IS NULL AND `+t.Touched+` < ?)`+due+`
				ORDER BY `+t.Touched+` LIMIT ? FOR UPDATE SKIP LOCKED)
			RETURNING *`, append(args, limit)...).Scan(dst)
		if n = int(res.RowsAffected); res.Error != nil || n == 0 {
			return pgdb.Translate(res.Error, "job")
		}
		return wake(tx)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
