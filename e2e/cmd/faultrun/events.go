package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	events "github.com/motionstudio/platform/proto-events"
)

// eventStreams are the streams of events (not jobs) the harness reads with its own durable
// consumer, as any subscriber of the platform would.
var eventStreams = []string{events.StreamIdentityEvents, events.StreamContentEvents, events.StreamAgentteamEvents}

// harnessDurable is the name of the harness's consumer on each event stream.
const harnessDurable = "faultrun_harness"

// seenEvent is what the harness's consumers saw of one event id.
type seenEvent struct {
	stream  string
	subject string
	// seqs counts deliveries per stream sequence: two sequences mean the event was stored
	// twice (a republish JetStream's de-duplication did not absorb), two deliveries of one
	// sequence a redelivery.
	seqs     map[uint64]int
	ceTime   time.Time
	received time.Time
	// job is the preview or run id the event reports (content.svg_preview.generated.v1,
	// agentteam.run.*).
	job string
}

// eventLog is every event the harness's consumers received, by ce-id.
type eventLog struct {
	mu   sync.Mutex
	byID map[string]*seenEvent
}

func newEventLog() *eventLog { return &eventLog{byID: map[string]*seenEvent{}} }

func (l *eventLog) record(stream string, m jetstream.Msg) {
	id := m.Headers().Get("ce-id")
	meta, err := m.Metadata()
	if id == "" || err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byID[id]
	if e == nil {
		e = &seenEvent{stream: stream, subject: m.Subject(), seqs: map[uint64]int{}, received: time.Now()}
		e.ceTime, _ = time.Parse(time.RFC3339Nano, m.Headers().Get("ce-time"))
		var payload struct {
			PreviewID string `json:"preview_id"`
			RunID     string `json:"run_id"`
		}
		if json.Unmarshal(m.Data(), &payload) == nil {
			e.job = payload.PreviewID + payload.RunID
		}
		l.byID[id] = e
	}
	e.seqs[meta.Sequence.Stream]++
}

// snapshot copies the log.
func (l *eventLog) snapshot() map[string]seenEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]seenEvent, len(l.byID))
	for id, e := range l.byID {
		c := *e
		c.seqs = make(map[uint64]int, len(e.seqs))
		for k, v := range e.seqs {
			c.seqs[k] = v
		}
		out[id] = c
	}
	return out
}

// has reports whether the event was received.
func (l *eventLog) has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.byID[id]
	return ok
}

// harnessBus is the harness's own connection to the cluster.
type harnessBus struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	ccs []jetstream.ConsumeContext
}

// connectHarness connects to the cluster (every node's address) and reconnects forever.
func connectHarness(url string) (*harnessBus, error) {
	nc, err := nats.Connect(url, nats.Name("faultrun"), nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &harnessBus{nc: nc, js: js}, nil
}

// consume starts a durable consumer per event stream feeding log. The streams exist once the
// services started.
func (h *harnessBus) consume(ctx context.Context, log *eventLog) error {
	for _, stream := range eventStreams {
		cons, err := h.js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
			Durable: harnessDurable, AckPolicy: jetstream.AckExplicitPolicy, DeliverPolicy: jetstream.DeliverAllPolicy,
			AckWait: 10 * time.Second, MaxAckPending: 10000,
		})
		if err != nil {
			return fmt.Errorf("harness consumer on %s: %w", stream, err)
		}
		cc, err := cons.Consume(func(m jetstream.Msg) {
			log.record(stream, m)
			_ = m.Ack()
		}, jetstream.PullMaxMessages(500))
		if err != nil {
			return fmt.Errorf("harness consume %s: %w", stream, err)
		}
		h.ccs = append(h.ccs, cc)
	}
	return nil
}

// streamInfo answers a stream's message count, or -1 when it does not exist.
func (h *harnessBus) streamMsgs(ctx context.Context, name string) (int64, error) {
	s, err := h.js.Stream(ctx, name)
	if err == jetstream.ErrStreamNotFound {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return int64(info.State.Msgs), nil
}

// replicas answers the replica count of each stream.
func (h *harnessBus) replicas(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	names := h.js.StreamNames(ctx)
	for name := range names.Name() {
		s, err := h.js.Stream(ctx, name)
		if err != nil {
			return nil, err
		}
		out[name] = s.CachedInfo().Config.Replicas
	}
	return out, names.Err()
}

func (h *harnessBus) close() {
	for _, cc := range h.ccs {
		cc.Stop()
	}
	h.nc.Close()
}
