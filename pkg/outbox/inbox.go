package outbox

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
)

// Once runs fn at most once per (consumer, eventID), making an event handler idempotent
// under redelivery. In one transaction it records the pair in the inbox and, when the pair
// is new, runs fn with that transaction; fn's error rolls both back, so a later delivery
// runs fn again. When the pair was already recorded it returns (false, nil) without calling
// fn. A concurrent call for the same pair waits for the first one's transaction. It returns
// fn's error unchanged, or an Internal error when the database fails.
func Once(ctx context.Context, db *gorm.DB, consumer, eventID string, fn func(tx *gorm.DB) error) (bool, error) {
	ran := false
	err := pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
		res := tx.Exec(`INSERT INTO inbox (consumer, event_id, processed_at) VALUES (?, ?, now())
			ON CONFLICT (consumer, event_id) DO NOTHING`, consumer, eventID)
		if res.Error != nil {
			return fmt.Errorf("outbox: inbox %s %s: %w", consumer, eventID, res.Error)
		}
		if res.RowsAffected == 0 {
			return nil
		}
		if err := fn(tx); err != nil {
			return err
		}
		ran = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return ran, nil
}
