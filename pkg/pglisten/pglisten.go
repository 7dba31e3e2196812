// Package pglisten keeps a process's in-memory caches exact across replicas with Postgres
// LISTEN/NOTIFY: triggers notify a channel in every transaction that changes what a cache
// holds, and one Listener per process hears the notifications over its own connection, after
// the commit, and hands each payload to the cache. While the Listener is not listening (before
// it first connects, and from the moment it loses its connection until it listens again) it
// tells the cache so, which then keeps nothing: a notification missed meanwhile can never
// leave a stale entry in memory.
package pglisten

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"
)

// Listener tuning.
const (
	// idleCheck is how long the listener waits for a notification before it pings its
	// connection, so a connection that died silently (a network partition) is noticed within
	// idleCheck plus pingTimeout. A closed connection (Postgres stopped, the backend
	// terminated) is noticed at once.
	idleCheck   = 5 * time.Second
	pingTimeout = 2 * time.Second
	minBackoff  = 100 * time.Millisecond
	maxBackoff  = 5 * time.Second
)

// Options say what a Listener listens to and whom it tells.
type Options struct {
	// DSN names the database; the listener opens a dedicated connection, which must not go
	// through a transaction-pooling proxy.
	DSN string
	// Channel is the notification channel the triggers notify.
	Channel string
	// ApplicationName names the listening connection in pg_stat_activity.
	ApplicationName string
	// Gauge names the gauge that reads 1 while the listener listens, else 0.
	Gauge prometheus.GaugeOpts
	// Notify is called with each notification's payload, on the listener's goroutine; it must
	// not block.
	Notify func(payload string)
	// Live is called with true once the listener listens and with false as soon as it lost
	// its connection (or stops); a cache drops everything on both and keeps entries only while
	// live.
	Live func(live bool)
}

// Listener listens on one channel over its own connection and reconnects when it loses it.
type Listener struct {
	opts      Options
	cfg       *pgx.ConnConfig
	log       *slog.Logger
	listening prometheus.Gauge
}

// New returns a listener as opts say and registers its gauge on reg. It fails when the DSN
// does not parse, Notify or Live is missing, or the gauge cannot be registered.
func New(opts Options, log *slog.Logger, reg prometheus.Registerer) (*Listener, error) {
	if opts.Notify == nil || opts.Live == nil {
		return nil, fmt.Errorf("pglisten: %s: Notify and Live are required", opts.Channel)
	}
	cfg, err := pgx.ParseConfig(opts.DSN)
	if err != nil {
		return nil, fmt.Errorf("pglisten: %s: %w", opts.Channel, err)
	}
	cfg.RuntimeParams["application_name"] = opts.ApplicationName
	g := prometheus.NewGauge(opts.Gauge)
	if err := reg.Register(g); err != nil {
		return nil, fmt.Errorf("pglisten: %s: register gauge: %w", opts.Channel, err)
	}
	return &Listener{opts: opts, cfg: cfg, log: log.With("component", "listener", "channel", opts.Channel), listening: g}, nil
}

// Run listens until ctx is done and then returns nil. A lost connection tells Live(false) at
// once and is reconnected after a backoff that doubles from 100 ms to 5 s; Live(true) follows
// once LISTEN succeeds again.
func (l *Listener) Run(ctx context.Context) error {
	backoff := minBackoff
	for {
		wasLive, err := l.listen(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if wasLive {
			backoff = minBackoff
		}
		l.log.WarnContext(ctx, "listener has no connection; what it keeps fresh is read from the database until it listens again",
			"error", err, "retry_in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// listen connects, listens and hands on notifications until the connection fails or ctx is
// done; wasLive reports whether it got to listen.
func (l *Listener) listen(ctx context.Context) (wasLive bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return false, fmt.Errorf("pglisten: connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pingTimeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.opts.Channel}.Sanitize()); err != nil {
		return false, fmt.Errorf("pglisten: listen: %w", err)
	}
	l.opts.Live(true)
	l.listening.Set(1)
	defer func() {
		l.opts.Live(false)
		l.listening.Set(0)
	}()
	for {
		wctx, cancel := context.WithTimeout(ctx, idleCheck)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			l.opts.Notify(n.Payload)
		case ctx.Err() != nil:
			return true, nil
		case pgconn.Timeout(err) && !conn.IsClosed():
			pctx, cancel := context.WithTimeout(ctx, pingTimeout)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return true, fmt.Errorf("pglisten: ping: %w", err)
			}
		default:
			return true, fmt.Errorf("pglisten: wait: %w", err)
		}
	}
}
