// Package asyncapi builds the AsyncAPI 3.0 document of each service from the events catalogue
// (subjects, producers, consumers, concerns) and the proto descriptors of the payloads.
//
// A message's headers are the CloudEvents binary-mode headers pkg/natsx writes; its payload
// schema is the protojson encoding pkg/natsx produces (proto field names, every field present):
// 64-bit integers are decimal strings, enums their value names, Timestamps RFC 3339 strings,
// unset message fields null, unset repeated fields [] and unset map fields {}. Fields of a
// oneof (proto3 optional included) are absent when unset.
package asyncapi

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	events "github.com/motionstudio/platform/proto-events"
)

// Version is the AsyncAPI version of the documents.
const Version = "3.0.0"

// headersSchema is the component schema of the CloudEvents headers every message carries.
const headersSchema = "CloudEventHeaders"

// Comments returns the leading comment of a proto declaration, or "" when it has none.
type Comments func(protoreflect.FullName) string

// object is a JSON object of the document; encoding/json writes its keys sorted, so the output
// is stable.
type object = map[string]any

// Build returns service's document. comments supplies descriptions from the .proto sources;
// nil leaves them out. It fails for an unknown service or a payload field of a type the
// encoding rules above do not cover.
func Build(service string, comments Comments) (object, error) {
	if !slices.Contains(events.Services(), service) {
		return nil, fmt.Errorf("asyncapi: unknown service %q", service)
	}
	if comments == nil {
		comments = func(protoreflect.FullName) string { return "" }
	}
	b := &builder{comments: comments, schemas: object{headersSchema: cloudEventHeaders()}}
	channels, operations, messages := object{}, object{}, object{}
	consumers := events.Consumers()
	for _, e := range events.Catalogue() {
		var own []events.Consumer
		for _, c := range consumers {
			if c.Service == service && c.Handles(e.Subject) {
				own = append(own, c)
			}
		}
		if e.Producer() != service && len(own) == 0 {
			continue
		}
		payload, err := b.message(e.New().ProtoReflect().Descriptor())
		if err != nil {
			return nil, fmt.Errorf("asyncapi: %s: %w", e.Subject, err)
		}
		name := shortName(e)
		messages[e.Subject] = b.messageObject(e, name, payload)
		channels[e.Subject] = object{
			"address":     e.Subject,
			"title":       e.Subject,
			"description": channelDescription(e, b.comments(protoreflect.FullName(e.MessageName())), consumers),
			"messages":    object{name: ref("#/components/messages/" + e.Subject)},
		}
		channelMessage := ref("#/channels/" + e.Subject + "/messages/" + name)
		if e.Producer() == service {
			operations[e.Subject+".send"] = object{
				"action":      "send",
				"channel":     ref("#/channels/" + e.Subject),
				"messages":    []any{channelMessage},
				"summary":     fmt.Sprintf("%s publishes %s.", service, e.Subject),
				"description": sendDescription(e),
			}
		}
		for _, c := range own {
			operations[e.Subject+".receive."+c.Name] = object{
				"action":      "receive",
				"channel":     ref("#/channels/" + e.Subject),
				"messages":    []any{channelMessage},
				"summary":     c.Summary,
				"description": receiveDescription(c),
			}
		}
	}
	return object{
		"asyncapi":           Version,
		"id":                 events.DocumentID(service),
		"info":               info(service),
		"defaultContentType": "application/json",
		"servers": object{"nats": object{
			"host":     "{host}",
			"protocol": "nats",
			"description": "The deployment's NATS server or cluster with JetStream (NATS_URL). Subjects are " +
				"used as written here; a deployment with NATS_SUBJECT_PREFIX prefixes every subject, stream " +
				"and durable name.",
			"variables": object{"host": object{
				"default":     "127.0.0.1:4222",
				"description": "host:port of a NATS server; the default is local development's.",
			}},
		}},
		"channels":   channels,
		"operations": operations,
		"components": object{"messages": messages, "schemas": b.schemas},
	}, nil
}

func ref(pointer string) object { return object{"$ref": pointer} }

// shortName is the message's proto name, the key of the message in its channel.
func shortName(e events.Entry) string {
	return string(e.New().ProtoReflect().Descriptor().Name())
}

func info(service string) object {
	return object{
		"title":   service + " events",
		"version": "1.0.0",
		"description": "The NATS JetStream subjects " + service + " publishes and consumes. Every message is a " +
			"CloudEvent in binary mode: the attributes travel as ce-* headers, the body is the protojson " +
			"encoding of the subject's proto message (proto field names, every field present; 64-bit integers " +
			"as decimal strings, Timestamps as RFC 3339 strings, unset messages as null). Consumers must ignore " +
			"unknown fields and de-duplicate on ce-id. Events are written to the producer's outbox in the " +
			"transaction of the state change they report and relayed to JetStream with Nats-Msg-Id = ce-id. " +
			"Generated from proto-events (docs/events.md describes delivery guarantees).",
	}
}

func channelDescription(e events.Entry, comment string, consumers []events.Consumer) string {
	var parts []string
	if comment != "" {
		parts = append(parts, comment)
	}
	kind := "Event"
	if e.Kind == events.KindJob {
		kind = "Job wake-up: the job row in the producer's database is the truth"
	}
	parts = append(parts, fmt.Sprintf("%s. Producer: %s. Stream: %s.", kind, e.Producer(), streamOf(e.Subject)))
	var readers []string
	for _, c := range consumers {
		if c.Handles(e.Subject) {
			readers = append(readers, c.Service+" ("+c.Name+")")
		}
	}
	if len(readers) == 0 {
		parts = append(parts, "Consumers: none inside the platform.")
	} else {
		parts = append(parts, "Consumers: "+strings.Join(readers, ", ")+".")
	}
	if e.WebhookEvent != "" {
		parts = append(parts, fmt.Sprintf("Delivered to tenant webhooks subscribed to %q.", e.WebhookEvent))
	}
	return strings.Join(parts, "\n\n")
}

func streamOf(subject string) string {
	for _, st := range events.Streams() {
		for _, f := range st.Subjects {
			if strings.HasPrefix(subject, strings.TrimSuffix(f, ">")) {
				return st.Name
			}
		}
	}
	return ""
}

func sendDescription(e events.Entry) string {
	return fmt.Sprintf("Written to %s's outbox in the transaction of the state change and relayed to stream "+
		"%s; a republished row keeps its ce-id, which JetStream and consumers de-duplicate on.",
		e.Producer(), streamOf(e.Subject))
}

func receiveDescription(c events.Consumer) string {
	if c.Delivery == events.DeliveryDurable {
		return fmt.Sprintf("Durable pull consumer %s on stream %s, filter %s, shared by the service's replicas: "+
			"explicit acknowledgement after the effect commits, handled once per ce-id, redelivered with "+
			"backoff on failure, dead-lettered to dlq.%s.", c.Name, c.Stream, c.Filter, c.Name)
	}
	if c.Stream == "" {
		return fmt.Sprintf("Every process subscribes to %s with core NATS (%s); a process that is down "+
			"misses the message.", c.Filter, c.Name)
	}
	return fmt.Sprintf("Every process reads %s from stream %s with its own ordered consumer (%s), so each "+
		"replica sees every message.", c.Filter, c.Stream, c.Name)
}

// messageObject is the entry's message: its headers schema and its payload.
func (b *builder) messageObject(e events.Entry, name string, payload object) object {
	specific := object{
		"ce-type":       object{"const": e.Subject},
		"ce-source":     object{"const": e.Source},
		"ce-subject":    object{"const": e.Subject},
		"ce-dataschema": object{"const": e.DataSchema()},
	}
	headers := object{"type": "object", "properties": specific}
	attr := "ce-" + e.Concern.Attribute()
	concern := fmt.Sprintf("%s is the payload's %s", attr, e.Concern.Field())
	if e.Concern.Optional() {
		concern += ", absent when a service, not a tenant's user, asked for the work"
	} else {
		headers["required"] = []any{attr}
	}
	return object{
		"name":        name,
		"title":       name,
		"summary":     fmt.Sprintf("%s on %s (%s).", e.MessageName(), e.Subject, concern),
		"contentType": "application/json",
		"headers":     object{"allOf": []any{ref("#/components/schemas/" + headersSchema), headers}},
		"payload":     payload,
	}
}

func cloudEventHeaders() object {
	uuid := func(description string) object {
		return object{"type": "string", "format": "uuid", "description": description}
	}
	return object{
		"type":        "object",
		"description": "CloudEvents 1.0 attributes in binary mode, and the NATS and trace headers beside them.",
		"required": []any{"ce-id", "ce-type", "ce-source", "ce-time", "ce-specversion", "ce-subject",
			"ce-dataschema", "content-type", "Nats-Msg-Id"},
		"properties": object{
			"ce-id": uuid("CloudEvents id: a UUID v7 made when the event is written to the outbox, " +
				"kept when it is republished. Consumers de-duplicate on it."),
			"ce-type":   object{"type": "string", "description": "CloudEvents type: the subject."},
			"ce-source": object{"type": "string", "description": "CloudEvents source: motionstudio/<producing service>."},
			"ce-time": object{"type": "string", "format": "date-time",
				"description": "When the state change was committed to the outbox (RFC 3339, UTC, nanoseconds)."},
			"ce-specversion": object{"const": "1.0"},
			"ce-subject":     object{"type": "string", "description": "The subject, without a deployment's prefix."},
			"ce-dataschema": object{"type": "string", "format": "uri",
				"description": "The payload's schema: the producer's AsyncAPI document id and a JSON pointer " +
					"to the schema in it (the document is served at GET /asyncapi.json)."},
			"content-type":      object{"const": "application/json", "description": "CloudEvents datacontenttype."},
			"ce-tenantid":       uuid("CloudEvents extension: the tenant the event concerns."),
			"ce-organizationid": uuid("CloudEvents extension: the organization the event concerns."),
			"Nats-Msg-Id":       uuid("Equal to ce-id: JetStream drops a republished event within the duplicate window."),
			"traceparent":       object{"type": "string", "description": "W3C trace context of the request that caused the event."},
			"tracestate":        object{"type": "string", "description": "W3C trace state, with traceparent."},
		},
	}
}
