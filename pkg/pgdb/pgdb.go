// Package pgdb opens PostgreSQL through gorm with pool settings, applies goose migrations
// embedded in a service binary, runs transactions and translates driver errors into apperr kinds.
package pgdb

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/telemetry"
)

// Config holds the connection string and pool limits.
type Config struct {
	// DSN is the PostgreSQL URL; each service fills in its own database on 127.0.0.1:5432.
	DSN string `env:"DATABASE_URL"`
	// MaxOpenConns caps the pool.
	MaxOpenConns int `env:"DB_MAX_OPEN_CONNS" default:"20"`
	// MaxIdleConns is how many idle connections the pool keeps: by default all of it, so a burst
	// does not close connections only to open new ones moments later.
	MaxIdleConns int `env:"DB_MAX_IDLE_CONNS" default:"20"`
	// ConnMaxLifetime recycles connections after this age.
	ConnMaxLifetime time.Duration `env:"DB_CONN_MAX_LIFETIME" default:"30m"`
	// ConnMaxIdleTime closes connections idle this long.
	ConnMaxIdleTime time.Duration `env:"DB_CONN_MAX_IDLE_TIME" default:"5m"`
	// GuardTransactions, set by tests and never from the environment, makes a statement on the
	// pool panic when its goroutine holds a transaction of the same pool (see guardTransactions).
	GuardTransactions bool
}

// Open connects, applies the pool settings and pings the database. Every statement made under a
// recording span gets a client span (otelpgx) with the OpenTelemetry database attributes: the
// statement's text as written, never its parameter values.
func Open(ctx context.Context, cfg Config) (*gorm.DB, error) {
	connCfg, err := pgx.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("pgdb: open: %w", err)
	}
	connCfg.Tracer = sqlTracer{otelpgx.NewTracer(otelpgx.WithTracerProvider(telemetry.Provider()))}
	db, err := gorm.Open(postgres.New(postgres.Config{Conn: stdlib.OpenDB(*connCfg)}), &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		TranslateError:         false,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	})
	if err != nil {
		return nil, fmt.Errorf("pgdb: open: %w", err)
	}
	if err := registerClientErrors(db); err != nil {
		return nil, err
	}
	if cfg.GuardTransactions {
		guardTransactions(db)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("pgdb: pool: %w", err)
	}
	sqlDB.SetMaxOpenConns(cfg.MaxOpenConns)
	sqlDB.SetMaxIdleConns(cfg.MaxIdleConns)
	sqlDB.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	sqlDB.SetConnMaxIdleTime(cfg.ConnMaxIdleTime)
	if err := Ping(ctx, db); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	return db, nil
}

// sqlTracer hands otelpgx only the statements made under a recording span, so that a statement
// outside any trace (every statement when tracing is off, and the relay's and sweepers' polls)
// costs one context lookup instead of otelpgx's timing and metric bookkeeping.
type sqlTracer struct{ *otelpgx.Tracer }

func (t sqlTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx
	}
	return t.Tracer.TraceQueryStart(ctx, conn, data)
}

func (t sqlTracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	if trace.SpanFromContext(ctx).IsRecording() {
		t.Tracer.TraceQueryEnd(ctx, conn, data)
	}
}

func (t sqlTracer) TracePrepareStart(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx
	}
	return t.Tracer.TracePrepareStart(ctx, conn, data)
}

func (t sqlTracer) TracePrepareEnd(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareEndData) {
	if trace.SpanFromContext(ctx).IsRecording() {
		t.Tracer.TracePrepareEnd(ctx, conn, data)
	}
}

// Ping checks that the database answers; it is the readiness check.
func Ping(ctx context.Context, db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return fmt.Errorf("pgdb: pool: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("pgdb: ping: %w", err)
	}
	return nil
}

// Close closes the underlying pool.
func Close(db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Source is one set of goose SQL migrations (files like 00001_init.sql at the root of FS),
// versioned in its own table so that shared packages (the outbox) and the service migrate
// independently.
type Source struct {
	Name string
	FS   fs.FS
}

// Embedded is the Source of migration files embedded under dir (for example
// `//go:embed migrations/*.sql` with dir "migrations").
func Embedded(name string, files embed.FS, dir string) Source {
	sub, err := fs.Sub(files, dir)
	if err != nil {
		// fs.Sub fails only for an invalid path literal, a programming error caught by every test.
		panic(fmt.Sprintf("pgdb: migrations dir %q: %v", dir, err))
	}
	return Source{Name: name, FS: sub}
}

// Migrate applies every pending migration of each source, in order, under a Postgres advisory
// lock so that replicas starting together migrate once. A pending migration numbered below the
// latest applied one is applied too: areas of one service own number ranges and land in any
// order, so a database migrated before a lower-numbered file landed must still receive it.
func Migrate(ctx context.Context, db *gorm.DB, log *slog.Logger, sources ...Source) error {
	sqlDB, err := db.DB()
	if err != nil {
		return fmt.Errorf("pgdb: pool: %w", err)
	}
	for _, src := range sources {
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return fmt.Errorf("pgdb: migrate %s: %w", src.Name, err)
		}
		p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, src.FS,
			goose.WithTableName("goose_"+src.Name+"_version"),
			goose.WithSessionLocker(locker),
			goose.WithDisableGlobalRegistry(true),
			goose.WithAllowOutofOrder(true),
		)
		if err != nil {
			return fmt.Errorf("pgdb: migrate %s: %w", src.Name, err)
		}
		results, err := p.Up(ctx)
		if err != nil {
			return fmt.Errorf("pgdb: migrate %s: %w", src.Name, err)
		}
		for _, r := range results {
			log.InfoContext(ctx, "migration applied", "source", src.Name, "file", r.Source.Path, "duration_ms", r.Duration.Milliseconds())
		}
	}
	return nil
}

// InTx runs fn in a transaction bound to ctx; it commits when fn returns nil and rolls back
// otherwise, returning fn's error unchanged. A transaction that could not begin because the
// database is unreachable fails as Unavailable.
func InTx(ctx context.Context, db *gorm.DB, fn func(tx *gorm.DB) error) error {
	err := db.WithContext(ctx).Transaction(fn)
	if _, ok := apperr.As(err); !ok && err != nil && unreachable(err) {
		return unavailableError(err)
	}
	return err
}

// Postgres error codes that Translate understands.
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
	codeCheckViolation      = "23514"
	// codeBadText is character_not_in_repertoire: a NUL character or invalid UTF-8 in text.
	codeBadText = "22021"
	// codeBadJSONText is untranslatable_character: a \u0000 escape in a jsonb string.
	codeBadJSONText = "22P05"
)

// badText reports whether err is Postgres refusing text the client sent.
func badText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == codeBadText || pgErr.Code == codeBadJSONText)
}

// badTextError is the client error for text Postgres cannot store.
func badTextError(err error) *apperr.Error {
	return apperr.Wrap(err, apperr.Invalid, "invalid_text", "the request holds text that cannot be stored: NUL characters or invalid UTF-8")
}

// unavailableError is the error for a statement that never reached the database: nothing was
// applied, so the client may retry (503) once the database is back.
func unavailableError(err error) *apperr.Error {
	e := apperr.Wrap(err, apperr.Unavailable, "database_unavailable", "the database is unavailable; retry shortly")
	e.RetryAfter = time.Second
	return e
}

// unreachable reports whether err means the statement never reached the database: no
// connection could be made (the server is down or restarting), or pgx failed before sending.
func unreachable(err error) bool {
	var connErr *pgconn.ConnectError
	return errors.As(err, &connErr) || pgconn.SafeToRetry(err)
}

// registerClientErrors makes every statement that fails because the client sent text Postgres
// cannot store (SQLSTATE 22021, or 22P05 inside jsonb) fail with an Invalid error instead, whether or not the
// repository translates its errors: a last line of defence behind the HTTP edge's own checks.
// A statement that never reached the database fails as Unavailable in the same way.
func registerClientErrors(db *gorm.DB) error {
	fn := func(tx *gorm.DB) {
		if _, ok := apperr.As(tx.Error); ok || tx.Error == nil {
			return
		}
		switch {
		case badText(tx.Error):
			tx.Error = badTextError(tx.Error)
		case unreachable(tx.Error):
			tx.Error = unavailableError(tx.Error)
		}
	}
	cb := db.Callback()
	for _, register := range []func(string, func(*gorm.DB)) error{
		cb.Create().After("gorm:create").Register,
		cb.Query().After("gorm:query").Register,
		cb.Update().After("gorm:update").Register,
		cb.Delete().After("gorm:delete").Register,
		cb.Row().After("gorm:row").Register,
		cb.Raw().After("gorm:raw").Register,
	} {
		if err := register("pgdb:client_errors", fn); err != nil {
			return fmt.Errorf("pgdb: register callback: %w", err)
		}
	}
	return nil
}

// Translate maps not-found and constraint errors to apperr kinds, naming what (for example
// "user") in the client message, and a database that could not be reached to Unavailable
// (nothing was applied; retry); other errors are wrapped as Internal. nil stays nil.
func Translate(err error, what string) error {
	if err == nil {
		return nil
	}
	if _, ok := apperr.As(err); ok {
		return err
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return apperr.Wrap(err, apperr.NotFound, "not_found", what+" not found")
	}
	if unreachable(err) {
		return unavailableError(err)
	}
	if badText(err) {
		return badTextError(err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case codeUniqueViolation:
			return apperr.Wrap(err, apperr.Conflict, "conflict", what+" already exists")
		case codeForeignKeyViolation:
			return apperr.Wrap(err, apperr.Invalid, "invalid_reference", what+" refers to a record that does not exist")
		case codeCheckViolation:
			return apperr.Wrap(err, apperr.Invalid, "invalid", what+" violates a constraint")
		}
	}
	return apperr.Wrap(err, apperr.Internal, "internal", "internal error")
}

// IsUniqueViolation reports whether err is a unique-constraint violation, optionally on the
// named constraint (empty matches any).
func IsUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == codeUniqueViolation &&
		(constraint == "" || pgErr.ConstraintName == constraint)
}
