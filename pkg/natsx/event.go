package natsx

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/motionstudio/platform/pkg/apperr"
)

// CloudEvents binary-mode header names and the values this package writes.
const (
	headerID          = "ce-id"
	headerType        = "ce-type"
	headerSource      = "ce-source"
	headerTime        = "ce-time"
	headerSpecVersion = "ce-specversion"
	headerSubject     = "ce-subject"
	headerDataSchema  = "ce-dataschema"
	headerContentType = "content-type"
	// Extension attributes naming whom an event concerns (lower-case alphanumeric names, as
	// CloudEvents requires).
	headerTenantID       = "ce-tenantid"
	headerOrganizationID = "ce-organizationid"
	specVersion          = "1.0"
	contentTypeJSON      = "application/json"
)

// Event is one CloudEvent. Subject is the NATS subject without the bus prefix; Data is the
// protojson encoding of the payload. The optional attributes DataSchema (ce-dataschema, the URI
// of the payload's schema), TenantID (ce-tenantid) and OrganizationID (ce-organizationid), the
// tenant or organization the event concerns, are left out of the message when empty.
type Event struct {
	ID             string
	Type           string
	Source         string
	Subject        string
	Time           time.Time
	DataSchema     string
	TenantID       string
	OrganizationID string
	Data           []byte
}

// payloadJSON encodes payloads with the .proto field names (snake_case, like the platform's
// HTTP APIs) and every field present, so consumers and webhook receivers see a stable shape.
var payloadJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// NewEvent builds an event with a new UUID v7 id, the current time and msg encoded as
// protojson. It returns an Invalid error when msg cannot be encoded.
func NewEvent(source, eventType, subject string, msg proto.Message) (Event, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return Event{}, fmt.Errorf("natsx: new event id: %w", err)
	}
	data, err := payloadJSON.Marshal(msg)
	if err != nil {
		return Event{}, apperr.Wrap(fmt.Errorf("natsx: encode %s: %w", eventType, err),
			apperr.Invalid, "invalid_event", "event payload cannot be encoded")
	}
	return Event{
		ID:      id.String(),
		Type:    eventType,
		Source:  source,
		Subject: subject,
		Time:    time.Now().UTC(),
		Data:    data,
	}, nil
}

// Publish stores ev on the stream that owns its (prefixed) subject and waits for the
// acknowledgement. Its attributes travel as CloudEvents binary-mode headers (ce-id, ce-type,
// ce-source, ce-time, ce-specversion, ce-subject, ce-dataschema, ce-tenantid,
// ce-organizationid, content-type), the empty optional ones left out. The event id is the
// Nats-Msg-Id, so publishing the same event again within the stream's duplicate window stores
// it once. Publishing is a producer span, a child of ctx's span, whose trace context travels in
// the traceparent and tracestate headers. It returns an Unavailable error when NATS does not
// acknowledge the message (no stream for the subject, timeout, connection down).
func (b *Bus) Publish(ctx context.Context, ev Event) (err error) {
	ctx, span := startSpan(ctx, trace.SpanKindProducer, "publish", ev)
	defer func() { endSpan(span, err) }()
	h := nats.Header{}
	h.Set(headerID, ev.ID)
	h.Set(headerType, ev.Type)
	h.Set(headerSource, ev.Source)
	h.Set(headerTime, ev.Time.UTC().Format(time.RFC3339Nano))
	h.Set(headerSpecVersion, specVersion)
	for name, value := range map[string]string{headerSubject: ev.Subject, headerDataSchema: ev.DataSchema,
		headerTenantID: ev.TenantID, headerOrganizationID: ev.OrganizationID} {
		if value != "" {
			h.Set(name, value)
		}
	}
	h.Set(headerContentType, contentTypeJSON)
	h.Set(jetstream.MsgIDHeader, ev.ID)
	propagation.TraceContext{}.Inject(ctx, headerCarrier(h))

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	msg := &nats.Msg{Subject: b.Subject(ev.Subject), Header: h, Data: ev.Data}
	if _, err := b.js.PublishMsg(ctx, msg); err != nil {
		return apperr.Wrap(fmt.Errorf("natsx: publish %s %s to %s: %w", ev.Type, ev.ID, msg.Subject, err),
			apperr.Unavailable, "event_bus_unavailable", "event bus unavailable")
	}
	return nil
}

// headerCarrier lets the otel propagator read and write NATS headers, whose Get is
// case-sensitive, under the lower-case W3C names.
type headerCarrier nats.Header

func (c headerCarrier) Get(key string) string { return nats.Header(c).Get(key) }

func (c headerCarrier) Set(key, value string) { nats.Header(c).Set(key, value) }

func (c headerCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}
