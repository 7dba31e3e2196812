package pgdb

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"gorm.io/gorm"
)

// Resealer opens a sealed value and seals it again under its sealing key unless that key sealed
// it already (pkg/crypt's Ring).
type Resealer interface {
	Reseal(sealed, aad []byte) (out []byte, resealed bool, err error)
}

// SealedColumn names one kind of value sealed at rest: its table, the row key, the sealed
// column, the associated data a row's value is bound to and the ring that reseals it. The names
// are the service's own constants, never input.
type SealedColumn struct {
	// Kind names the values in the counts, for example "webhook_secrets".
	Kind string
	// Table, Key and Column are the table, its primary key column and the sealed bytea column.
	Table, Key, Column string
	// AAD is the associated data of the row with this key (its text form).
	AAD func(key string) []byte
	// Ring reseals the values.
	Ring Resealer
}

// ResealCount is what Reseal did to one kind of value: never a value, only counts.
type ResealCount struct {
	Kind string `json:"kind"`
	// Scanned counts the values read; Resealed those written again under the sealing key;
	// Unreadable those no key of the ring opens (they stay as they are).
	Scanned    int `json:"scanned"`
	Resealed   int `json:"resealed"`
	Unreadable int `json:"unreadable"`
}

// ResealOptions tune Reseal.
type ResealOptions struct {
	// Batch is how many rows one transaction reads and rewrites (default 500).
	Batch int
	// OnBatch, when set, hears each kind's running count after every committed batch.
	OnBatch func(ResealCount)
}

// ErrUnreadable reports sealed values that no key of the ring opens: removing a key is not
// safe while there are any.
var ErrUnreadable = errors.New("pgdb: some sealed values do not open under any key of the ring")

// casAttempts bounds how often one row is reread after a concurrent write replaced its value.
const casAttempts = 3

// Reseal rewrites every value of every column under its ring's sealing key: in key order, one
// short transaction per batch, each row written only when its value is still the one read
// (compare-and-swap), so a concurrent write is never lost. Values already under the sealing key
// are left alone, so a run that stops (ctx cancelled, crash) continues where it was when run
// again, and a second run changes nothing. It returns the counts so far, with ErrUnreadable
// when a value opens under no key.
func Reseal(ctx context.Context, db *gorm.DB, cols []SealedColumn, opts ResealOptions) ([]ResealCount, error) {
	if opts.Batch <= 0 {
		opts.Batch = 500
	}
	var counts []ResealCount
	unreadable := 0
	for _, col := range cols {
		count := ResealCount{Kind: col.Kind}
		err := resealColumn(ctx, db, col, opts, &count)
		counts = append(counts, count)
		if err != nil {
			return counts, err
		}
		unreadable += count.Unreadable
	}
	if unreadable > 0 {
		return counts, fmt.Errorf("%w (%d)", ErrUnreadable, unreadable)
	}
	return counts, nil
}

type sealedRow struct {
	Key    string
	Sealed []byte
}

func resealColumn(ctx context.Context, db *gorm.DB, col SealedColumn, opts ResealOptions, count *ResealCount) error {
	// #nosec G201 -- table and column names are the service's constants, the values are bound.
	page := fmt.Sprintf(`SELECT %[2]s::text AS key, %[3]s AS sealed FROM %[1]s
		WHERE %[3]s IS NOT NULL AND (?::text IS NULL OR %[2]s > ?) ORDER BY %[2]s LIMIT ?`, col.Table, col.Key, col.Column)
	// #nosec G201 -- as above.
	swap := fmt.Sprintf(`UPDATE %[1]s SET %[3]s = ? WHERE %[2]s = ? AND %[3]s = ?`, col.Table, col.Key, col.Column)
	// #nosec G201 -- as above.
	reread := fmt.Sprintf(`SELECT %[2]s::text AS key, %[3]s AS sealed FROM %[1]s WHERE %[2]s = ?`, col.Table, col.Key, col.Column)
	var after *string
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var rows []sealedRow
		err := InTx(ctx, db, func(tx *gorm.DB) error {
			rows = nil
			if err := tx.Raw(page, after, after, opts.Batch).Scan(&rows).Error; err != nil {
				return err
			}
			batch := *count
			for _, r := range rows {
				batch.Scanned++
				resealed, err := resealRow(tx, col, swap, reread, r)
				switch {
				case err != nil && errors.Is(err, errOpen):
					batch.Unreadable++
				case err != nil:
					return err
				case resealed:
					batch.Resealed++
				}
			}
			*count = batch
			return nil
		})
		if err != nil {
			return fmt.Errorf("pgdb: reseal %s: %w", col.Kind, err)
		}
		if len(rows) == 0 {
			return nil
		}
		last := rows[len(rows)-1].Key
		after = &last
		if opts.OnBatch != nil {
			opts.OnBatch(*count)
		}
		if len(rows) < opts.Batch {
			return nil
		}
	}
}

// errOpen marks a value the ring cannot open, so that it is counted rather than fatal.
var errOpen = errors.New("unreadable")

// resealRow rewrites one row's value when the ring reseals it; when another writer replaced the
// value in the meantime it rereads the row and tries again.
func resealRow(tx *gorm.DB, col SealedColumn, swap, reread string, r sealedRow) (bool, error) {
	for range casAttempts {
		out, resealed, err := col.Ring.Reseal(r.Sealed, col.AAD(r.Key))
		if err != nil {
			return false, fmt.Errorf("%w: %w", errOpen, err)
		}
		if !resealed {
			return false, nil
		}
		res := tx.Exec(swap, out, r.Key, r.Sealed)
		if res.Error != nil {
			return false, res.Error
		}
		if res.RowsAffected == 1 {
			return true, nil
		}
		var now []sealedRow
		if err := tx.Raw(reread, r.Key).Scan(&now).Error; err != nil {
			return false, err
		}
		if len(now) == 0 || now[0].Sealed == nil {
			return false, nil
		}
		r = now[0]
	}
	return false, fmt.Errorf("row %s kept changing while it was resealed", r.Key)
}

// ResealCommand runs an operator's `admin reseal [-batch N]` over cols: it logs the running
// counts after every batch and writes one JSON object to out, the sealing key's id and the
// counts per kind (never a value), also when the run stops early.
func ResealCommand(ctx context.Context, db *gorm.DB, cols []SealedColumn, sealingID string, args []string, log *slog.Logger, out io.Writer) error {
	fs := flag.NewFlagSet("admin reseal", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	batch := fs.Int("batch", 500, "rows per transaction")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("admin reseal [-batch N]: %w", err)
	}
	counts, err := Reseal(ctx, db, cols, ResealOptions{Batch: *batch, OnBatch: func(c ResealCount) {
		log.InfoContext(ctx, "reseal", slog.String("kind", c.Kind), slog.Int("scanned", c.Scanned), slog.Int("resealed", c.Resealed))
	}})
	if counts == nil {
		counts = []ResealCount{}
	}
	if encErr := json.NewEncoder(out).Encode(map[string]any{"key_id": sealingID, "kinds": counts}); encErr != nil {
		return errors.Join(err, encErr)
	}
	return err
}
