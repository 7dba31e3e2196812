package outbox

import (
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
)

// lagQuery measures the unsent rows from the outbox_unsent_idx partial index, so a scrape
// stays cheap however many sent rows the table keeps.
const lagQuery = `SELECT count(*)::float8,
	COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8
	FROM outbox WHERE sent_at IS NULL`

// NewLagCollector returns the Prometheus collector of the outbox's lag, measured on each
// scrape: outbox_unsent_events, the rows not yet published, and
// outbox_oldest_unsent_age_seconds, the age of the oldest of them (0 when the outbox is
// drained). A growing age means the relay is stuck (NATS down, a row it cannot publish).
func NewLagCollector(db *gorm.DB) *pgdb.QueryCollector {
	return pgdb.NewQueryCollector(db, lagQuery, nil,
		pgdb.Gauge{Name: "outbox_unsent_events", Help: "Outbox rows not yet published to the event bus."},
		pgdb.Gauge{Name: "outbox_oldest_unsent_age_seconds", Help: "Age of the oldest unpublished outbox row in seconds (0 when none)."},
	)
}
