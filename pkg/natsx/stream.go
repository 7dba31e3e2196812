package natsx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Retention says when a stream lets go of a message besides its limits.
type Retention int

const (
	// RetainLimits keeps messages until the stream's age or size limits drop them (events:
	// any number of consumers may read them, now or later).
	RetainLimits Retention = iota
	// RetainWorkQueue removes a message once a consumer acknowledged it (job wake-ups: each
	// subject has one worker durable, and an unclaimed job waits until a worker comes).
	RetainWorkQueue
	// RetainInterest removes a message once every consumer present acknowledged it.
	RetainInterest
)

func (r Retention) policy() jetstream.RetentionPolicy {
	switch r {
	case RetainWorkQueue:
		return jetstream.WorkQueuePolicy
	case RetainInterest:
		return jetstream.InterestPolicy
	default:
		return jetstream.LimitsPolicy
	}
}

// StreamSpec describes a file-backed JetStream stream. Name and Subjects are given without
// the bus prefix. Zero limits mean none.
type StreamSpec struct {
	Name     string
	Subjects []string
	// Retention is when acknowledged messages go (RetainLimits by default).
	Retention Retention
	// MaxAge drops messages older than this; zero keeps them until the stream is full.
	MaxAge time.Duration
	// MaxBytes drops the oldest messages once the stream holds more bytes than this.
	MaxBytes int64
	// Replicas is the number of copies a cluster keeps (zero is one).
	Replicas int
	// Duplicates is the window in which a repeated Nats-Msg-Id is dropped; zero is the
	// server's default (two minutes).
	Duplicates time.Duration
}

// StreamConfig holds the operator's limits for the platform's streams. Event streams keep
// messages by age and size for any reader; job streams are work queues whose messages go
// once a worker acknowledged them, bounded too so that a stalled worker cannot fill the disk.
type StreamConfig struct {
	// Replicas is every stream's replica count (3 in a three-node cluster).
	Replicas int `env:"NATS_STREAM_REPLICAS" default:"1"`
	// EventsMaxAge is how long an event stream keeps a message.
	EventsMaxAge time.Duration `env:"NATS_EVENTS_MAX_AGE" default:"168h"`
	// EventsMaxBytes caps each event stream's size in bytes.
	EventsMaxBytes int64 `env:"NATS_EVENTS_MAX_BYTES" default:"1073741824"`
	// JobsMaxAge is how long a job wake-up waits for a worker (the job row stays the truth).
	JobsMaxAge time.Duration `env:"NATS_JOBS_MAX_AGE" default:"72h"`
	// JobsMaxBytes caps each job stream's size in bytes.
	JobsMaxBytes int64 `env:"NATS_JOBS_MAX_BYTES" default:"268435456"`
}

// Spec is the spec of a platform stream under c's limits: a work queue for jobs, a stream
// kept by age and size for events.
func (c StreamConfig) Spec(name string, subjects []string, jobs bool) StreamSpec {
	if jobs {
		return StreamSpec{Name: name, Subjects: subjects, Retention: RetainWorkQueue,
			MaxAge: c.JobsMaxAge, MaxBytes: c.JobsMaxBytes, Replicas: c.Replicas}
	}
	return StreamSpec{Name: name, Subjects: subjects, Retention: RetainLimits,
		MaxAge: c.EventsMaxAge, MaxBytes: c.EventsMaxBytes, Replicas: c.Replicas}
}

// StreamSpec is the spec of a platform stream under the limits the bus was configured with
// (Config.Streams).
func (b *Bus) StreamSpec(name string, subjects []string, jobs bool) StreamSpec {
	return b.streams.Spec(name, subjects, jobs)
}

// EnsureStream creates the stream or updates it in place to match s, with the bus prefix
// applied to its name and subjects. JetStream cannot change an existing stream's retention
// to or from a work queue, so a stream made with another retention keeps it (with a warning
// in the log) and gets every other setting of s. A spec that states no retention, limits or
// replicas (only a name and subjects) leaves those of an existing stream as they are, so a
// service that does not configure a shared stream never undoes the limits another one set.
// While JetStream is briefly unavailable it retries (retryTransient). It returns the server's
// error (an Internal kind) when the stream cannot be created or the update is not allowed, and
// the last error when ctx ends first.
func (b *Bus) EnsureStream(ctx context.Context, s StreamSpec) error {
	subjects := make([]string, len(s.Subjects))
	for i, subj := range s.Subjects {
		subjects[i] = b.Subject(subj)
	}
	cfg := jetstream.StreamConfig{
		Name:       b.StreamName(s.Name),
		Subjects:   subjects,
		Retention:  s.Retention.policy(),
		Storage:    jetstream.FileStorage,
		MaxAge:     s.MaxAge,
		MaxBytes:   s.MaxBytes,
		Replicas:   max(s.Replicas, 1),
		Duplicates: s.Duplicates,
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = -1
	}
	bare := s.Retention == RetainLimits && s.MaxAge == 0 && s.MaxBytes <= 0 && s.Replicas == 0
	err := b.retryTransient(ctx, "ensure stream "+s.Name, func() error {
		err := b.createOrUpdate(ctx, cfg, bare)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			// Another process created it between our look-up and our create: update it instead.
			err = b.createOrUpdate(ctx, cfg, bare)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("natsx: ensure stream %s: %w", s.Name, err)
	}
	return nil
}

// createOrUpdate creates the stream, or updates it keeping the retention it was made with and,
// for a bare spec, its limits and replicas too.
func (b *Bus) createOrUpdate(ctx context.Context, cfg jetstream.StreamConfig, bare bool) error {
	existing, err := b.js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = b.js.CreateStream(ctx, cfg)
		return err
	}
	if err != nil {
		return err
	}
	if bare {
		have := existing.CachedInfo().Config
		cfg.Retention, cfg.MaxAge, cfg.MaxBytes, cfg.Replicas = have.Retention, have.MaxAge, have.MaxBytes, have.Replicas
	}
	if have := existing.CachedInfo().Config.Retention; have != cfg.Retention {
		b.log.WarnContext(ctx, "stream keeps its retention: JetStream cannot change it in place",
			"stream", cfg.Name, "retention", have.String(), "wanted", cfg.Retention.String())
		cfg.Retention = have
	}
	_, err = b.js.UpdateStream(ctx, cfg)
	return err
}

// Retries of JetStream API calls that failed for a passing reason.
const (
	retryMin = 500 * time.Millisecond
	retryMax = 10 * time.Second
)

// retryTransient calls fn until it succeeds, fails for a reason that will not pass, or ctx
// ends, waiting 0.5 s, 1 s, 2 s... up to 10 s between calls and logging each failure. The
// JetStream API may be briefly unavailable (a node restarting, a leader election, a busy
// cluster answering after the request timed out); a service waits for it instead of stopping.
// It returns fn's last error.
func (b *Bus) retryTransient(ctx context.Context, what string, fn func() error) error {
	for failures := 1; ; failures++ {
		err := fn()
		if err == nil || ctx.Err() != nil || !transient(err) {
			return err
		}
		delay := min(retryMin<<min(failures-1, 8), retryMax)
		b.log.WarnContext(ctx, "jetstream unavailable; retrying", "what", what, "failures", failures, "retry_in", delay, "error", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

// transient reports whether a JetStream API failure may pass by itself: the request timed out
// or found no responder, the connection is reconnecting, or the server answered 503
// (JetStream temporarily unavailable, no quorum yet).
func transient(err error) bool {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrDisconnected):
		return true
	case errors.As(err, &apiErr):
		return apiErr.Code == 503
	}
	return false
}
