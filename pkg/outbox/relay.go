package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/pgdb"
)

// Relay defaults and tuning.
const (
	defaultBatchSize  = 100
	defaultInterval   = 200 * time.Millisecond
	defaultRetention  = 72 * time.Hour
	defaultMaxBackoff = 10 * time.Second
	publishTimeout    = 5 * time.Second
	purgeEvery        = 10 * time.Minute
	// lastPassTimeout bounds the last pass Run makes once its context is done, and each pass's
	// publishing.
	lastPassTimeout = 5 * time.Second
	// settleTimeout is how long a pass's transaction outlives its context, to mark sent the
	// rows it published before the context ended.
	settleTimeout = 2 * time.Second
	// kickPasses is how many quick passes (after 1, 2, 4 and 8 ms) follow a Kick that found
	// nothing yet, the writer's transaction not having committed.
	kickPasses = 4
)

// RelayConfig tunes a Relay; zero fields take the defaults.
type RelayConfig struct {
	// BatchSize is how many rows one pass publishes at most (default 100).
	BatchSize int
	// Interval is the pause after a pass that found the outbox drained (default 200ms).
	Interval time.Duration
	// Retention is how long sent rows and inbox entries are kept (default 72h).
	Retention time.Duration
	// MaxBackoff caps the pause after failed passes, which doubles from Interval
	// (default 10s).
	MaxBackoff time.Duration
}

// Relay publishes outbox rows to JetStream in the order they were written and marks them
// sent. Several relays may run over the same table; each row is published by one of them.
type Relay struct {
	db   *gorm.DB
	bus  *natsx.Bus
	log  *slog.Logger
	cfg  RelayConfig
	kick chan struct{}
}

// NewRelay returns a relay over db's outbox table publishing through bus.
func NewRelay(db *gorm.DB, bus *natsx.Bus, log *slog.Logger, cfg RelayConfig) *Relay {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = defaultBatchSize
	}
	if cfg.Interval <= 0 {
		cfg.Interval = defaultInterval
	}
	if cfg.Retention <= 0 {
		cfg.Retention = defaultRetention
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = defaultMaxBackoff
	}
	return &Relay{db: db, bus: bus, log: log.With("component", "outbox-relay"), cfg: cfg, kick: make(chan struct{}, 1)}
}

// Kick asks for a pass now rather than after the interval: a Writer made with Notify calls it
// when it adds a row, before the row's transaction commits, so a pass that finds nothing is
// followed by a few quick ones (1, 2, 4 and 8 ms later) and a row usually goes out within
// milliseconds of its commit. It never blocks.
func (r *Relay) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run relays until ctx is done, then makes a last pass of up to five seconds over the rows
// still unsent, and returns nil. A full batch is followed at once by the next pass; a failed
// pass (NATS or the database unavailable) is retried after a backoff that doubles up to
// MaxBackoff. Sent rows and inbox entries past Retention are purged at start and every ten
// minutes.
func (r *Relay) Run(ctx context.Context) error {
	r.relay(ctx)
	r.lastPass(ctx)
	return nil
}

// Beside runs fn with ctx while the relay runs beside it, and returns fn's error. The relay
// stops only once fn returned, with a last pass: a service's fn serves HTTP and runs the
// consumers, whose requests and handlers still write outbox rows while they drain after ctx
// is done, and those rows are published before the process exits.
func (r *Relay) Beside(ctx context.Context, fn func(ctx context.Context) error) error {
	relayCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
		_ = r.Run(relayCtx)
	}()
	err := fn(ctx)
	stop()
	<-relayed
	return err
}

// lastPass publishes the rows still unsent, batch after batch, until a pass finds less than a
// full batch, fails or lastPassTimeout ends; what it leaves is published by another replica's
// relay or by the next start.
func (r *Relay) lastPass(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lastPassTimeout)
	defer cancel()
	for {
		n, err := r.Flush(ctx)
		if err != nil {
			r.log.WarnContext(ctx, "outbox relay last pass failed", "published", n, "error", err)
			return
		}
		if n < r.cfg.BatchSize {
			return
		}
	}
}

// relay is Run's loop until ctx is done.
func (r *Relay) relay(ctx context.Context) {
	var nextPurge time.Time
	failures, quick := 0, 0
	for {
		if now := time.Now(); !now.Before(nextPurge) {
			nextPurge = now.Add(purgeEvery)
			if _, err := r.Purge(ctx); err != nil && ctx.Err() == nil {
				r.log.WarnContext(ctx, "outbox purge failed", "error", err)
			}
		}
		n, err := r.pass(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := r.cfg.Interval
		switch {
		case err != nil:
			if n > 0 {
				// The pass made progress before it failed: the backoff starts again.
				failures = 0
			}
			failures++
			wait = r.backoff(failures)
			r.log.WarnContext(ctx, "outbox relay pass failed", "published", n, "failures", failures,
				"retry_in", wait, "error", err)
		case n == r.cfg.BatchSize:
			failures, wait = 0, 0
		case n == 0 && quick > 0:
			failures, wait = 0, time.Millisecond<<(kickPasses-quick)
			quick--
		default:
			failures, quick = 0, 0
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-r.kick:
				t.Stop()
				quick = kickPasses
			case <-t.C:
			}
		}
	}
}

// pass flushes one batch; a pass under way when ctx ends still completes (its publishing
// within lastPassTimeout), so that it commits or rolls back before the last pass starts: a
// pass cut short would still hold its rows' locks for a moment, and the last pass, which skips
// locked rows, would leave them unsent.
func (r *Relay) pass(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lastPassTimeout)
	defer cancel()
	return r.Flush(ctx)
}

// backoff doubles from Interval with each consecutive failure, capped at MaxBackoff, plus up
// to 20% jitter so that relays of several replicas spread out.
func (r *Relay) backoff(failures int) time.Duration {
	d := r.cfg.MaxBackoff
	if failures < 32 {
		d = min(r.cfg.Interval<<(failures-1), r.cfg.MaxBackoff)
	}
	return d + rand.N(d/5+1) // #nosec G404 -- retry jitter, not a secret
}

// row is one unsent outbox row.
type row struct {
	ID             string
	Subject        string
	Type           string
	Source         string
	Data           []byte
	TraceHeaders   []byte
	CreatedAt      time.Time
	DataSchema     string
	TenantID       string
	OrganizationID string
}

// Flush makes one pass: in a transaction it locks up to BatchSize unsent rows, oldest first,
// skipping rows another relay holds, publishes them in order and marks them sent. At the first
// publish failure it records the attempt and error on that row and stops, leaving it and the
// rows after it for the next pass. ctx bounds the publishing; the transaction outlives it by
// up to two seconds, so that a pass running out of time still marks sent the rows it
// published: were they rolled back, a bus too slow to take a whole batch in time would have
// every pass publish the same rows again, and none ever marked sent. It returns how many rows
// it published, with an Unavailable error when the bus is down or refuses a message, the
// error of ctx when it ended during a publish, or an Internal error from the database.
func (r *Relay) Flush(ctx context.Context) (int, error) {
	if !r.bus.Conn().IsConnected() {
		return 0, apperr.Wrap(errors.New("outbox: relay: bus not connected"),
			apperr.Unavailable, "event_bus_unavailable", "event bus unavailable")
	}
	txCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(ctx, func() { time.AfterFunc(settleTimeout, cancel) })()
	var (
		published int
		pubErr    error
	)
	err := pgdb.InTx(txCtx, r.db, func(tx *gorm.DB) error {
		var rows []row
		err := tx.Raw(`SELECT id::text AS id, subject, type, source, data, trace_headers, created_at,
				data_schema, tenant_id, organization_id
			FROM outbox WHERE sent_at IS NULL
			ORDER BY created_at, id LIMIT ? FOR UPDATE SKIP LOCKED`, r.cfg.BatchSize).Scan(&rows).Error
		if err != nil {
			return fmt.Errorf("outbox: relay: select: %w", err)
		}
		sent := make([]string, 0, len(rows))
		for _, rw := range rows {
			if err := r.publish(ctx, rw); err != nil {
				pubErr = fmt.Errorf("outbox: relay: %w", err)
				if err := tx.Exec(`UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?`,
					err.Error(), rw.ID).Error; err != nil {
					return fmt.Errorf("outbox: relay: record failure of %s: %w", rw.ID, err)
				}
				break
			}
			sent = append(sent, rw.ID)
		}
		if len(sent) > 0 {
			if err := tx.Exec(`UPDATE outbox SET sent_at = now(), attempts = attempts + 1, last_error = NULL
				WHERE id IN ?`, sent).Error; err != nil {
				return fmt.Errorf("outbox: relay: mark sent: %w", err)
			}
		}
		published = len(sent)
		return nil
	})
	if err != nil {
		// Rows published before the commit failed stay unsent and are published again;
		// JetStream drops the repeats by their Nats-Msg-Id.
		return 0, err
	}
	return published, pubErr
}

// publish sends one row as a CloudEvent whose id is the row id, under the trace context that
// was current when the row was written.
func (r *Relay) publish(ctx context.Context, rw row) error {
	carrier := propagation.MapCarrier{}
	if len(rw.TraceHeaders) > 0 {
		if err := json.Unmarshal(rw.TraceHeaders, &carrier); err != nil {
			return fmt.Errorf("trace headers of %s: %w", rw.ID, err)
		}
	}
	ctx = propagation.TraceContext{}.Extract(ctx, carrier)
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	return r.bus.Publish(ctx, natsx.Event{
		ID:             rw.ID,
		Type:           rw.Type,
		Source:         rw.Source,
		Subject:        rw.Subject,
		Time:           rw.CreatedAt,
		DataSchema:     rw.DataSchema,
		TenantID:       rw.TenantID,
		OrganizationID: rw.OrganizationID,
		Data:           rw.Data,
	})
}

// Purge deletes sent outbox rows and inbox entries older than Retention and returns how many
// rows it deleted. Inbox entries only need to outlive redeliveries, which end long before.
// It returns an Internal error when the database fails.
func (r *Relay) Purge(ctx context.Context) (int64, error) {
	cutoff := time.Now().Add(-r.cfg.Retention)
	db := r.db.WithContext(ctx)
	res := db.Exec(`DELETE FROM outbox WHERE sent_at IS NOT NULL AND sent_at < ?`, cutoff)
	if res.Error != nil {
		return 0, fmt.Errorf("outbox: purge sent: %w", res.Error)
	}
	deleted := res.RowsAffected
	res = db.Exec(`DELETE FROM inbox WHERE processed_at < ?`, cutoff)
	if res.Error != nil {
		return deleted, fmt.Errorf("outbox: purge inbox: %w", res.Error)
	}
	return deleted + res.RowsAffected, nil
}
