// Package bus is identity-svc's NATS adapter: the consumers that fan identity events out to
// tenants' webhooks, run webhook delivery jobs and move quests, the listener of API key
// revocations, and the HTTP sender the deliveries use.
package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbound"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
	"github.com/motionstudio/platform/services/identity-svc/internal/webhook"
)

// Enqueuer creates the delivery messages of an event, once per consumer and event id however
// often the event is delivered.
type Enqueuer interface {
	Enqueue(ctx context.Context, consumer, tenantID, eventID, eventType string, body []byte, newID func() string, now time.Time) (int, error)
}

// Deliverer makes one delivery attempt of a message.
type Deliverer interface {
	Deliver(ctx context.Context, messageID string) error
}

// Webhooks runs the fan-out and delivery consumers.
type Webhooks struct {
	bus       *natsx.Bus
	enqueuer  Enqueuer
	deliverer Deliverer
	log       *slog.Logger
	newID     func() string
	now       func() time.Time
}

// NewWebhooks returns the webhook consumers.
func NewWebhooks(bus *natsx.Bus, enqueuer Enqueuer, deliverer Deliverer, log *slog.Logger, newID func() string, now func() time.Time) *Webhooks {
	return &Webhooks{bus: bus, enqueuer: enqueuer, deliverer: deliverer, log: log, newID: newID, now: now}
}

// FanOut consumes identity events until ctx is done and turns each into one delivery job per
// subscribed webhook of the event's tenant, once per event id.
func (w *Webhooks) FanOut(ctx context.Context) error {
	c, ok := events.Durable(events.DurableWebhookFanout)
	if !ok {
		return fmt.Errorf("bus: %s is not in the consumer catalogue", events.DurableWebhookFanout)
	}
	return w.bus.Consume(ctx, natsx.ConsumerSpec{Stream: c.Stream, Durable: c.Name, FilterSubjects: []string{c.Filter}}, w.fanOut)
}

// envelope is the JSON body a webhook receives.
type envelope struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

func (w *Webhooks) fanOut(ctx context.Context, m natsx.Message) error {
	name, ok := events.WebhookEventOf(m.Subject)
	if !ok {
		return nil
	}
	entry, _ := events.Lookup(m.Subject)
	msg := entry.New()
	if err := m.Decode(msg); err != nil {
		return err
	}
	tenantID := stringField(msg.ProtoReflect(), "tenant_id")
	if tenantID == "" {
		return nil
	}
	data, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(msg)
	if err != nil {
		return natsx.Permanent(fmt.Errorf("bus: encode %s %s: %w", m.Type, m.ID, err))
	}
	body, err := json.Marshal(envelope{ID: m.ID, Type: name, Timestamp: m.Time.UTC(), Data: data})
	if err != nil {
		return natsx.Permanent(fmt.Errorf("bus: envelope %s %s: %w", m.Type, m.ID, err))
	}
	_, err = w.enqueuer.Enqueue(ctx, events.DurableWebhookFanout, tenantID, m.ID, name, body, w.newID, w.now())
	return err
}

func stringField(m protoreflect.Message, name protoreflect.Name) string {
	f := m.Descriptor().Fields().ByName(name)
	if f == nil || f.Kind() != protoreflect.StringKind {
		return ""
	}
	return m.Get(f).String()
}

// Deliveries consumes delivery wake-ups until ctx is done and makes each attempt
// (natsx.ConsumeJobs).
func (w *Webhooks) Deliveries(ctx context.Context, concurrency int) error {
	c := natsx.JobConsumer{Durable: events.DurableWebhookDelivery, Queue: "webhook.delivery", Concurrency: concurrency, AckWait: 2 * time.Minute}
	return natsx.ConsumeJobs(ctx, w.bus, c, (*identityv1.WebhookDeliveryJob).GetDeliveryId, w.deliverer.Deliver)
}

// Sender POSTs webhook bodies through the SSRF-safe outbound client.
type Sender struct {
	client *outbound.Client
	log    *slog.Logger
}

// NewSender returns a Sender over client that logs failed sends to log.
func NewSender(client *outbound.Client, log *slog.Logger) *Sender {
	return &Sender{client: client, log: log}
}

// Send POSTs body with headers to url. When no HTTP answer was received (refused, unreachable,
// timeout) it returns a *webhook.SendError whose reason names no address, wrapping
// webhook.ErrRefusedDestination when the address is refused, and logs the full error at warn.
func (s *Sender) Send(ctx context.Context, url string, headers map[string]string, body []byte) (webhook.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return webhook.Response{}, fmt.Errorf("bus: webhook request: %w", err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := s.client.Do(ctx, req)
	if err != nil {
		reason := outbound.Reason(err)
		// The URL may carry a token in its path or query: log its host and the cause only.
		s.log.WarnContext(ctx, "webhook delivery failed", "host", req.URL.Host, "reason", reason, "error", withoutURL(err))
		if errors.Is(err, outbound.ErrRefusedDestination) {
			err = fmt.Errorf("%w: %w", webhook.ErrRefusedDestination, err)
		}
		return webhook.Response{Duration: time.Since(start)}, &webhook.SendError{Reason: reason, Err: err}
	}
	return webhook.Response{
		Status: resp.StatusCode, Body: resp.Body, Duration: resp.Duration,
		RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now()),
	}, nil
}

// withoutURL returns the cause of a *url.Error in err's chain, whose text repeats the whole
// request URL, or err when there is none.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retryAfter reads a Retry-After header in seconds or as an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
