// Package natsx is the platform's event bus: CloudEvents in binary mode over NATS JetStream,
// with protojson payloads, W3C trace context in the message headers, durable pull consumers
// that retry with backoff and a dead-letter stream for messages that cannot be handled.
package natsx

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Config says where NATS is and how this process namespaces what it creates there.
type Config struct {
	// URL is the NATS server (with JetStream).
	URL string `env:"NATS_URL" default:"nats://127.0.0.1:4222"`
	// Prefix is prepended to every subject, stream and durable name. Tests use it to keep
	// parallel suites apart; it is empty in production.
	Prefix string `env:"NATS_SUBJECT_PREFIX"`
	// Streams holds the retention limits and replica count of the streams a service ensures.
	Streams StreamConfig
	// ShutdownGrace is how long a stopping consumer lets its running handlers finish (and ack)
	// before it cancels their context, after which they nak their messages for another replica.
	// A Config literal's zero cancels them at once.
	ShutdownGrace time.Duration `env:"NATS_SHUTDOWN_GRACE" default:"10s"`
}

// Reconnect and request tuning. The reconnect buffer holds publishes made while the
// connection is down so that a short outage does not fail them.
const (
	reconnectMinDelay = 100 * time.Millisecond
	reconnectMaxDelay = 5 * time.Second
	reconnectBufSize  = 8 << 20
	drainTimeout      = 30 * time.Second
	requestTimeout    = 5 * time.Second
)

// Bus is a connection to NATS with its JetStream context and the name prefix applied to
// everything it creates.
type Bus struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	prefix  string
	streams StreamConfig
	grace   time.Duration
	log     *slog.Logger
	closed  chan struct{}
	// consumers are the durables Consume was called with, for ConsumerCollector.
	consumers consumers
}

// Connect dials NATS as the named client. After the first connection it reconnects forever
// with capped exponential backoff and jitter, buffering publishes meanwhile, and logs every
// disconnect and reconnect. It returns an Unavailable error when the first connection fails.
func Connect(ctx context.Context, cfg Config, name string, log *slog.Logger) (*Bus, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("natsx: connect: %w", err)
	}
	timeout := requestTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	b := &Bus{prefix: cfg.Prefix, streams: cfg.Streams, grace: max(cfg.ShutdownGrace, 0), log: log, closed: make(chan struct{})}
	var closeOnce sync.Once
	nc, err := nats.Connect(cfg.URL,
		nats.Name(name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(reconnectDelay),
		nats.ReconnectBufSize(reconnectBufSize),
		nats.DrainTimeout(drainTimeout),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			// A nil error is our own Close.
			if err != nil {
				log.Warn("nats disconnected", "error", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			log.Error("nats async error", "subject", subject, "error", err)
		}),
		nats.ClosedHandler(func(*nats.Conn) {
			closeOnce.Do(func() { close(b.closed) })
		}),
	)
	if err != nil {
		// The URL is left out of the error: it may carry credentials.
		return nil, apperr.Wrap(fmt.Errorf("natsx: connect: %w", err),
			apperr.Unavailable, "event_bus_unavailable", "event bus unavailable")
	}
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(requestTimeout))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsx: jetstream: %w", err)
	}
	b.nc, b.js = nc, js
	return b, nil
}

// reconnectDelay doubles from reconnectMinDelay up to reconnectMaxDelay and adds up to 50%
// jitter so that a fleet does not reconnect in lockstep.
func reconnectDelay(attempts int) time.Duration {
	d := reconnectMaxDelay
	if attempts < 16 {
		d = min(reconnectMinDelay<<max(attempts-1, 0), reconnectMaxDelay)
	}
	return d + rand.N(d/2+1) // #nosec G404 -- reconnect jitter, not a secret
}

// Conn is the underlying NATS connection.
func (b *Bus) Conn() *nats.Conn { return b.nc }

// JetStream is the JetStream context of the connection.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

// Subject is name with the bus prefix, the subject actually used on the server.
func (b *Bus) Subject(name string) string { return b.prefix + name }

var nameUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// StreamName is the stream's name on the server: the prefix, with every character other
// than letters, digits, '_' and '-' replaced by '_', followed by name.
func (b *Bus) StreamName(name string) string {
	return nameUnsafe.ReplaceAllString(b.prefix, "_") + name
}

// ConsumerName is the durable consumer's name on the server, prefixed like StreamName.
func (b *Bus) ConsumerName(durable string) string { return b.StreamName(durable) }

// Ping is the readiness check: the connection is up and JetStream answers. It returns an
// Unavailable error otherwise.
func (b *Bus) Ping(ctx context.Context) error {
	unavailable := func(err error) error {
		return apperr.Wrap(err, apperr.Unavailable, "event_bus_unavailable", "event bus unavailable")
	}
	if !b.nc.IsConnected() {
		return unavailable(fmt.Errorf("natsx: ping: connection %s", b.nc.Status()))
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := b.js.AccountInfo(ctx); err != nil {
		return unavailable(fmt.Errorf("natsx: ping: jetstream: %w", err))
	}
	return nil
}

// Close drains the connection, letting subscriptions finish the messages they hold and
// flushing pending publishes, and waits until the connection is closed. A connection that
// is down is closed at once.
func (b *Bus) Close() {
	if !b.nc.IsConnected() {
		b.nc.Close()
		return
	}
	if err := b.nc.Drain(); err != nil {
		b.nc.Close()
	}
	select {
	case <-b.closed:
	case <-time.After(drainTimeout + time.Second):
		b.nc.Close()
	}
}
