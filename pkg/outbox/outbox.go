// Package outbox makes event publishing transactional: a state change writes its events to
// the outbox table in the same database transaction, a relay publishes them to JetStream and
// marks them sent, and consumers use the inbox to handle each event id once. Together with
// JetStream's de-duplication on the event id this gives effectively-once handling that
// survives restarts of the process, NATS or the database.
package outbox

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/protobuf/proto"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations creates the outbox and inbox tables; a service passes it to pgdb.Migrate
// beside its own migrations.
var Migrations = pgdb.Source{Name: "outbox", FS: migrationsFS()}

func migrationsFS() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		// The directory is embedded at build time, so this cannot fail at run time.
		panic(err)
	}
	return sub
}

// errNoTransaction is returned by Add when it is not given a transaction.
var errNoTransaction = errors.New("outbox: add needs the caller's transaction")

// Writer records events in the outbox as the given CloudEvents source.
type Writer struct {
	source string
	notify func()
}

// NewWriter returns a writer whose events carry source (for example "identity-svc").
func NewWriter(source string) *Writer { return &Writer{source: source} }

// Notify makes the writer call notify (a Relay's Kick) after each row it adds, so the relay of
// this process publishes it without waiting for its interval. It returns w.
func (w *Writer) Notify(notify func()) *Writer {
	w.notify = notify
	return w
}

// Add records an event of eventType with msg as its protojson payload, to be published on
// subject (without the bus prefix), inside tx, which must be the transaction of the state
// change the event reports: if it rolls back, the event is never published. eventType must be
// a subject of the events catalogue and msg its message: the event carries the catalogue's
// data schema and the tenant or organization msg names (events.AttributesOf). The trace
// context of ctx is stored with the event and continues at the consumers. It returns the
// event id, an Invalid error when msg cannot be encoded, and an Internal error when the
// catalogue refuses the event, tx is not a transaction or the insert fails.
func (w *Writer) Add(ctx context.Context, tx *gorm.DB, subject, eventType string, msg proto.Message) (string, error) {
	if _, ok := tx.Statement.ConnPool.(gorm.TxCommitter); !ok {
		return "", errNoTransaction
	}
	attrs, err := events.AttributesOf(eventType, msg)
	if err != nil {
		return "", fmt.Errorf("outbox: add: %w", err)
	}
	ev, err := natsx.NewEvent(w.source, eventType, subject, msg)
	if err != nil {
		return "", fmt.Errorf("outbox: add %s: %w", eventType, err)
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	trace, err := json.Marshal(carrier)
	if err != nil {
		return "", fmt.Errorf("outbox: add %s: trace headers: %w", eventType, err)
	}
	err = tx.WithContext(ctx).Exec(
		`INSERT INTO outbox (id, subject, type, source, data, trace_headers, created_at,
		   data_schema, tenant_id, organization_id)
		 VALUES (?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?)`,
		ev.ID, ev.Subject, ev.Type, ev.Source, string(ev.Data), string(trace), ev.Time,
		attrs.DataSchema, attrs.TenantID, attrs.OrganizationID,
	).Error
	if err != nil {
		return "", fmt.Errorf("outbox: add %s: %w", eventType, err)
	}
	if w.notify != nil {
		w.notify()
	}
	return ev.ID, nil
}
