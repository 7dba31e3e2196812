package natsx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/logx"
)

// Dead-letter stream and the headers added to a dead-lettered copy.
const (
	deadLetterStream      = "DEADLETTER"
	deadLetterSubject     = "dlq."
	deadLetterMaxAge      = 30 * 24 * time.Hour
	headerDLQReason       = "dlq-reason"
	headerDLQStream       = "dlq-stream"
	headerDLQConsumer     = "dlq-consumer"
	headerDLQDeliveries   = "dlq-deliveries"
	headerDLQSubject      = "dlq-subject"
	headerNATSPrefix      = "Nats-"
	ackTimeout            = 5 * time.Second
	defaultMaxDeliver     = 5
	defaultAckWait        = 30 * time.Second
	defaultMaxAckPending  = 64
	defaultConcurrency    = 1
	prefetchPerConcurrent = 2
	// pullHeartbeat is how often the server confirms a waiting pull request. Two missed
	// heartbeats make the consumer pull again: a pull lost with its consumer's leader (a node
	// stopping) or refused before a new leader took over ("no responders") is renewed within
	// seconds, where nats.go's default, half the 30 s expiry, left the consumer idle for 30 s.
	pullHeartbeat = 3 * time.Second
)

// defaultBackoff is the delay before redeliveries 1, 2, 3 and every later one.
var defaultBackoff = []time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute}

// Message is a delivered event. Event.Subject is the NATS subject without the bus prefix;
// Delivery counts deliveries of this message to the consumer, starting at 1.
type Message struct {
	Event
	Delivery uint64
	Header   nats.Header
}

// Decode unmarshals the protojson payload into dst, ignoring unknown fields so that
// producers can add fields first. Its error is Invalid and Permanent: a payload that does
// not decode now never will, so the message goes to the dead-letter stream.
func (m Message) Decode(dst proto.Message) error {
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(m.Data, dst); err != nil {
		return Permanent(apperr.Wrap(fmt.Errorf("natsx: decode %s %s: %w", m.Type, m.ID, err),
			apperr.Invalid, "invalid_event", "event payload cannot be decoded"))
	}
	return nil
}

// Handler processes one message. Returning nil acknowledges it; an error asks for a
// redelivery after a backoff, unless it is Permanent.
type Handler func(ctx context.Context, m Message) error

// permanentError marks a handler error that retrying cannot fix.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }

func (e permanentError) Unwrap() error { return e.err }

// Permanent wraps err so that Consume sends the message to the dead-letter stream at once
// instead of retrying it. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err: err}
}

func isPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// ConsumerSpec describes a durable pull consumer. Stream, Durable and FilterSubjects are
// given without the bus prefix.
type ConsumerSpec struct {
	Stream         string
	Durable        string
	FilterSubjects []string
	// MaxDeliver is how many deliveries a failing message gets before it is dead-lettered
	// (default 5).
	MaxDeliver int
	// Backoff is the delay before redelivery n; the last value repeats (default 1s, 5s,
	// 30s, 2m).
	Backoff []time.Duration
	// AckWait is how long the server waits for an acknowledgement before redelivering; a
	// running handler keeps extending it (default 30s).
	AckWait time.Duration
	// MaxAckPending bounds the messages delivered and not yet acknowledged across all
	// processes sharing the durable (default 64).
	MaxAckPending int
	// Concurrency is how many handlers this Consume call runs at once (default 1, which
	// handles messages in stream order apart from redeliveries).
	Concurrency int
}

func (s ConsumerSpec) withDefaults() ConsumerSpec {
	if s.MaxDeliver <= 0 {
		s.MaxDeliver = defaultMaxDeliver
	}
	if len(s.Backoff) == 0 {
		s.Backoff = defaultBackoff
	}
	if s.AckWait <= 0 {
		s.AckWait = defaultAckWait
	}
	if s.MaxAckPending <= 0 {
		s.MaxAckPending = defaultMaxAckPending
	}
	if s.Concurrency <= 0 {
		s.Concurrency = defaultConcurrency
	}
	return s
}

// backoff is the delay after the given (failed) delivery.
func (s ConsumerSpec) backoff(delivery uint64) time.Duration {
	i := int(min(delivery, uint64(len(s.Backoff)))) - 1 // #nosec G115 -- bounded by len(s.Backoff)
	return s.Backoff[max(i, 0)]
}

// Consume creates or updates the durable pull consumer (explicit acks) and hands its
// messages to h until ctx is done. It then stops fetching, naks the messages fetched but not
// yet handed to h, lets running handlers finish for up to the bus's ShutdownGrace, cancels
// the context of those still running (a handler that returns because of it has its message
// nak'd, so another replica gets it at once rather than after AckWait), waits for them and
// returns nil.
// A handler error leads to a redelivery after the spec's backoff, or at the RetryAt() time of
// an error in its chain that has that method (jobs.HeldError: another worker leases the job
// until then); either way the delivery counts. A message without valid CloudEvents headers or
// JSON payload, a Permanent error, and an error on the last allowed delivery copy the message
// to the dead-letter subject "dlq.<durable>" (stream DEADLETTER, which Consume ensures) with
// dlq-* headers saying why, and then terminate it. The server is not given MaxDeliver: Consume
// counts deliveries itself, so a message whose last delivery crashed the process, or whose
// dead-lettering failed, is dead-lettered on the next delivery rather than silently dropped.
// Setting the consumer up is retried while JetStream is briefly unavailable. It returns an
// Internal error when the consumer cannot be set up or stops on its own (it is deleted, or the
// bus is closed first).
func (b *Bus) Consume(ctx context.Context, spec ConsumerSpec, h Handler) error {
	spec = spec.withDefaults()
	cons, err := b.setUp(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	b.consumers.add(consumerRef{stream: spec.Stream, durable: spec.Durable})

	c := &consumer{
		bus:   b,
		spec:  spec,
		name:  b.ConsumerName(spec.Durable),
		h:     h,
		slots: make(chan struct{}, spec.Concurrency),
		log:   b.log.With("consumer", spec.Durable),
	}
	// Handlers get their own context, cancelled only after the subscription is drained: a
	// message a handler gives back on shutdown must not be redelivered to this process's
	// pull request while it is going away.
	hctx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	var (
		errMu   sync.Mutex
		lastErr error
	)
	cc, err := cons.Consume(func(jm jetstream.Msg) { c.dispatch(ctx, hctx, jm) },
		jetstream.PullMaxMessages(min(spec.MaxAckPending, prefetchPerConcurrent*spec.Concurrency)),
		jetstream.PullHeartbeat(pullHeartbeat),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			errMu.Lock()
			lastErr = err
			errMu.Unlock()
			c.log.WarnContext(ctx, "consume error", "error", err)
		}),
	)
	if err != nil {
		return fmt.Errorf("natsx: consume %s: %w", spec.Durable, err)
	}

	select {
	case <-ctx.Done():
		c.stop()
		// Drain hands the buffered messages to dispatch, which gives them back at once.
		cc.Drain()
		select {
		case <-cc.Closed():
		case <-time.After(drainTimeout):
			cc.Stop()
		}
		c.finish(b.grace, cancelHandlers)
		return nil
	case <-cc.Closed():
		c.stop()
		cancelHandlers()
		c.running.Wait()
		errMu.Lock()
		defer errMu.Unlock()
		if lastErr == nil {
			return fmt.Errorf("natsx: consume %s stopped: subscription closed", spec.Durable)
		}
		return fmt.Errorf("natsx: consume %s stopped: %w", spec.Durable, lastErr)
	}
}

// setUp ensures the dead-letter stream and creates or updates the durable consumer, retrying
// while JetStream is briefly unavailable (retryTransient).
func (b *Bus) setUp(ctx context.Context, spec ConsumerSpec) (jetstream.Consumer, error) {
	cfg := jetstream.ConsumerConfig{
		Durable:       b.ConsumerName(spec.Durable),
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxDeliver:    -1,
		AckWait:       spec.AckWait,
		MaxAckPending: spec.MaxAckPending,
	}
	// A single filter goes in FilterSubject so that servers before 2.10 accept it.
	switch len(spec.FilterSubjects) {
	case 0:
	case 1:
		cfg.FilterSubject = b.Subject(spec.FilterSubjects[0])
	default:
		for _, s := range spec.FilterSubjects {
			cfg.FilterSubjects = append(cfg.FilterSubjects, b.Subject(s))
		}
	}
	var cons jetstream.Consumer
	err := b.retryTransient(ctx, "set up consumer "+spec.Durable, func() error {
		var err error
		cons, err = b.createConsumer(ctx, spec, cfg)
		return err
	})
	return cons, err
}

func (b *Bus) createConsumer(ctx context.Context, spec ConsumerSpec, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	// The dead letters get the configured replicas like every platform stream: with a single
	// copy on one node of a cluster, no consumer could start while that node is down.
	if err := b.EnsureStream(ctx, StreamSpec{
		Name:     deadLetterStream,
		Subjects: []string{deadLetterSubject + ">"},
		MaxAge:   deadLetterMaxAge,
		Replicas: b.streams.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("natsx: consume %s: %w", spec.Durable, err)
	}
	cons, err := b.js.CreateOrUpdateConsumer(ctx, b.StreamName(spec.Stream), cfg)
	if err != nil {
		return nil, fmt.Errorf("natsx: consume %s: create consumer: %w", spec.Durable, err)
	}
	return cons, nil
}

// consumer runs the handler for one Consume call.
type consumer struct {
	bus   *Bus
	spec  ConsumerSpec
	name  string
	h     Handler
	slots chan struct{}
	log   *slog.Logger

	mu       sync.Mutex
	stopping bool
	running  sync.WaitGroup
}

// stop makes dispatch hand back every later message, so running.Wait cannot race with a
// new handler starting.
func (c *consumer) stop() {
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
}

// finish lets the running handlers finish for up to grace, then cancels their context with
// cancel and waits for them.
func (c *consumer) finish(grace time.Duration, cancel context.CancelFunc) {
	idle := make(chan struct{})
	go func() {
		c.running.Wait()
		close(idle)
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		c.log.Info("handlers still running after the shutdown grace; cancelling them", "grace", grace)
	}
	cancel()
	<-idle
}

// dispatch runs on the library's delivery goroutine: it waits for a free slot and starts
// the handler in its own goroutine with hctx, or hands the message back when Consume is
// stopping (ctx is done), so that no message starts being handled once shutdown began.
func (c *consumer) dispatch(ctx, hctx context.Context, jm jetstream.Msg) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		_ = jm.Nak()
		return
	}
	c.mu.Lock()
	if c.stopping || ctx.Err() != nil {
		c.mu.Unlock()
		<-c.slots
		_ = jm.Nak()
		return
	}
	c.running.Add(1)
	c.mu.Unlock()
	go func() {
		defer func() {
			<-c.slots
			c.running.Done()
		}()
		c.process(hctx, jm)
	}()
}

// process settles one message: ack, delayed nak, or dead-letter and terminate.
func (c *consumer) process(ctx context.Context, jm jetstream.Msg) {
	meta, err := jm.Metadata()
	if err != nil {
		c.log.ErrorContext(ctx, "message without jetstream metadata", "subject", jm.Subject(), "error", err)
		_ = jm.Term()
		return
	}
	if meta.NumDelivered > uint64(c.spec.MaxDeliver) { // #nosec G115 -- MaxDeliver is positive (withDefaults)
		c.deadLetter(ctx, jm, meta, fmt.Sprintf("max deliveries (%d) exceeded", c.spec.MaxDeliver))
		return
	}
	msg, err := c.toMessage(jm, meta)
	if err != nil {
		c.deadLetter(ctx, jm, meta, "poison: "+err.Error())
		return
	}
	hctx := propagation.TraceContext{}.Extract(ctx, headerCarrier(jm.Headers()))
	hctx, span := startSpan(hctx, trace.SpanKindConsumer, "process", msg.Event, deliveryAttrs(c.spec.Durable, msg.Delivery)...)
	// The handler's log lines carry the event id and the trace id, as a request's do.
	err = c.run(logx.WithTraceID(logx.WithAttrs(hctx, slog.String("event_id", msg.ID))), jm, msg)
	endSpan(span, err)
	switch {
	case err == nil:
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
		defer cancel()
		if err := jm.DoubleAck(actx); err != nil {
			c.log.WarnContext(ctx, "ack failed; the message will be redelivered", "event_id", msg.ID, "error", err)
		}
	case isPermanent(err):
		c.deadLetter(ctx, jm, meta, "permanent: "+err.Error())
	case ctx.Err() != nil:
		_ = jm.Nak()
	case meta.NumDelivered >= uint64(c.spec.MaxDeliver): // #nosec G115 -- MaxDeliver is positive (withDefaults)
		c.deadLetter(ctx, jm, meta, fmt.Sprintf("failed %d deliveries: %s", meta.NumDelivered, err))
	default:
		delay := c.spec.backoff(meta.NumDelivered)
		var ra interface{ RetryAt() time.Time }
		if errors.As(err, &ra) {
			delay = max(time.Until(ra.RetryAt()), 0)
		}
		c.log.WarnContext(hctx, "handler failed; will retry", "event_id", msg.ID, "event_type", msg.Type,
			"delivery", meta.NumDelivered, "retry_in", delay, "error", err)
		_ = jm.NakWithDelay(delay)
	}
}

// run calls the handler, keeping the message's ack timer fresh while it works and turning
// a panic into an ordinary (retryable) error.
func (c *consumer) run(ctx context.Context, jm jetstream.Msg, msg Message) (err error) {
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(c.spec.AckWait / 2)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = jm.InProgress()
			}
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("natsx: handler panic: %v", r)
		}
	}()
	return c.h(ctx, msg)
}

// toMessage reads the CloudEvents headers; an error means the message is poison.
func (c *consumer) toMessage(jm jetstream.Msg, meta *jetstream.MsgMetadata) (Message, error) {
	h := jm.Headers()
	m := Message{
		Event: Event{
			ID:             h.Get(headerID),
			Type:           h.Get(headerType),
			Source:         h.Get(headerSource),
			Subject:        strings.TrimPrefix(jm.Subject(), c.bus.prefix),
			DataSchema:     h.Get(headerDataSchema),
			TenantID:       h.Get(headerTenantID),
			OrganizationID: h.Get(headerOrganizationID),
			Data:           jm.Data(),
		},
		Delivery: meta.NumDelivered,
		Header:   h,
	}
	if v := h.Get(headerSpecVersion); v != specVersion {
		return Message{}, fmt.Errorf("unsupported %s %q", headerSpecVersion, v)
	}
	for _, required := range [...]struct{ name, value string }{
		{headerID, m.ID}, {headerType, m.Type}, {headerSource, m.Source},
	} {
		if required.value == "" {
			return Message{}, fmt.Errorf("missing %s", required.name)
		}
	}
	if v := h.Get(headerTime); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return Message{}, fmt.Errorf("invalid %s: %w", headerTime, err)
		}
		m.Time = t
	}
	if ct := h.Get(headerContentType); ct != "" && !strings.HasPrefix(ct, contentTypeJSON) {
		return Message{}, fmt.Errorf("unsupported %s %q", headerContentType, ct)
	}
	if !json.Valid(m.Data) {
		return Message{}, errors.New("payload is not json")
	}
	return m, nil
}

// deadLetter copies the message to the dead-letter subject and terminates it. When the copy
// cannot be stored the message is left for redelivery, which dead-letters it again.
func (c *consumer) deadLetter(ctx context.Context, jm jetstream.Msg, meta *jetstream.MsgMetadata, reason string) {
	h := nats.Header{}
	for k, vs := range jm.Headers() {
		if strings.HasPrefix(k, headerNATSPrefix) {
			continue
		}
		h[k] = vs
	}
	h.Set(headerDLQReason, reason)
	h.Set(headerDLQStream, meta.Stream)
	h.Set(headerDLQConsumer, c.spec.Durable)
	h.Set(headerDLQDeliveries, strconv.FormatUint(meta.NumDelivered, 10))
	h.Set(headerDLQSubject, strings.TrimPrefix(jm.Subject(), c.bus.prefix))
	// One copy per stream message and consumer, even if this is retried.
	h.Set(jetstream.MsgIDHeader, fmt.Sprintf("%s:%s:%d", meta.Stream, c.name, meta.Sequence.Stream))

	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	dlq := &nats.Msg{Subject: c.bus.Subject(deadLetterSubject + c.spec.Durable), Header: h, Data: jm.Data()}
	if _, err := c.bus.js.PublishMsg(pctx, dlq); err != nil {
		c.log.ErrorContext(ctx, "dead-lettering failed; will retry", "subject", jm.Subject(),
			"stream_seq", meta.Sequence.Stream, "reason", reason, "error", err)
		_ = jm.NakWithDelay(c.spec.backoff(meta.NumDelivered))
		return
	}
	c.log.ErrorContext(ctx, "message dead-lettered", "subject", jm.Subject(), "event_id", h.Get(headerID),
		"stream_seq", meta.Sequence.Stream, "deliveries", meta.NumDelivered, "reason", reason)
	if err := jm.Term(); err != nil {
		c.log.WarnContext(ctx, "terminate failed; the message will be redelivered and dead-lettered again",
			"stream_seq", meta.Sequence.Stream, "error", err)
	}
}
