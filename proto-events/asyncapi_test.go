package events_test

import (
	"bytes"
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	events "github.com/motionstudio/platform/proto-events"
)

// asyncDoc is the part of an AsyncAPI document the specs read.
type asyncDoc struct {
	AsyncAPI   string `json:"asyncapi"`
	ID         string `json:"id"`
	Channels   map[string]struct{ Address string }
	Operations map[string]struct {
		Action  string
		Channel struct {
			Ref string `json:"$ref"`
		}
	}
	Components struct {
		Messages map[string]struct {
			Headers json.RawMessage
			Payload struct {
				Ref string `json:"$ref"`
			}
		}
	}
}

func document(service string) (asyncDoc, []byte) {
	raw, ok := events.AsyncAPI(service)
	Expect(ok).To(BeTrue(), service)
	var doc asyncDoc
	Expect(json.Unmarshal(raw, &doc)).To(Succeed(), service)
	return doc, raw
}

// natsxJSON is how pkg/natsx encodes payloads.
var natsxJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

var _ = Describe("the AsyncAPI documents", func() {
	It("exist for every service and for nothing else", func() {
		for _, s := range events.Services() {
			doc, _ := document(s)
			Expect(doc.AsyncAPI).To(Equal("3.0.0"))
			Expect(doc.ID).To(Equal(events.DocumentID(s)))
		}
		_, ok := events.AsyncAPI("billing-svc")
		Expect(ok).To(BeFalse())
	})

	It("give every subject a channel at its address and a send operation in its producer's document", func() {
		for _, e := range events.Catalogue() {
			doc, _ := document(e.Producer())
			Expect(doc.Channels).To(HaveKey(e.Subject))
			Expect(doc.Channels[e.Subject].Address).To(Equal(e.Subject))
			op, ok := doc.Operations[e.Subject+".send"]
			Expect(ok).To(BeTrue(), "%s has no send operation", e.Subject)
			Expect(op.Action).To(Equal("send"))
			Expect(op.Channel.Ref).To(Equal("#/channels/" + e.Subject))
		}
	})

	It("give every consumer a receive operation in its service's document, and send only what the service produces", func() {
		for _, s := range events.Services() {
			doc, _ := document(s)
			want := map[string]string{}
			for _, e := range events.Catalogue() {
				if e.Producer() == s {
					want[e.Subject+".send"] = "send"
				}
			}
			for _, c := range events.Consumers() {
				if c.Service != s {
					continue
				}
				for _, subject := range c.Subjects {
					want[subject+".receive."+c.Name] = "receive"
					Expect(doc.Channels).To(HaveKey(subject))
				}
			}
			got := map[string]string{}
			for id, op := range doc.Operations {
				got[id] = op.Action
			}
			Expect(got).To(Equal(want), s)
		}
	})

	It("resolve every event's ce-dataschema to its payload schema in the producer's document", func() {
		for _, e := range events.Catalogue() {
			doc, raw := document(e.Producer())
			id, pointer, ok := strings.Cut(e.DataSchema(), "#")
			Expect(ok).To(BeTrue())
			Expect(id).To(Equal(doc.ID))
			Expect(doc.Components.Messages[e.Subject].Payload.Ref).To(Equal("#" + pointer))
			schema := compile(raw, pointer)
			Expect(schema.Title).To(Equal(string(e.New().ProtoReflect().Descriptor().Name())))
		}
	})

	It("describe payloads as pkg/natsx encodes them, empty and with every field set", func() {
		for _, e := range events.Catalogue() {
			_, raw := document(e.Producer())
			_, pointer, _ := strings.Cut(e.DataSchema(), "#")
			schema := compile(raw, pointer)

			empty := e.New()
			full := e.New()
			fill(full.ProtoReflect())
			for _, m := range []proto.Message{empty, full} {
				data, err := natsxJSON.Marshal(m)
				Expect(err).NotTo(HaveOccurred())
				v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
				Expect(err).NotTo(HaveOccurred())
				Expect(schema.Validate(v)).To(Succeed(), "%s: %s", e.Subject, data)
			}
		}
	})

	It("refuse payloads that break the encoding", func() {
		_, raw := document(events.ServiceIdentity)
		schema := compile(raw, "/components/schemas/motionstudio.identity.v1.PaymentConfirmed")
		for field, value := range map[string]any{
			"amount_minor": 1500,             // int64 is a string
			"confirmed_at": 1767323045,       // a Timestamp is an RFC 3339 string
			"currency":     nil,              // every field is present
			"plan_id":      []any{"p1"},      // a string is not a list
			"tenant_id":    map[string]any{}, // nor an object
		} {
			v := fullPayload(events.SubjectPaymentConfirmed)
			if value == nil {
				delete(v, field)
			} else {
				v[field] = value
			}
			Expect(schema.Validate(v)).NotTo(Succeed(), field)
		}
	})

	It("require the CloudEvents headers and the attribute naming whom the event concerns", func() {
		for _, e := range events.Catalogue() {
			_, raw := document(e.Producer())
			headers := compile(raw, "/components/messages/"+e.Subject+"/headers")
			attr := "ce-" + e.Concern.Attribute()
			h := map[string]any{
				"ce-id": "0190b0c4-7c6f-7d2e-9f3e-6a1f0c2b9d11", "ce-type": e.Subject, "ce-source": e.Source,
				"ce-time": "2026-01-02T03:04:05.123456789Z", "ce-specversion": "1.0", "ce-subject": e.Subject,
				"ce-dataschema": e.DataSchema(), "content-type": "application/json",
				"Nats-Msg-Id": "0190b0c4-7c6f-7d2e-9f3e-6a1f0c2b9d11", attr: "0190b0c4-0000-7000-8000-000000000001",
			}
			Expect(headers.Validate(h)).To(Succeed(), e.Subject)

			delete(h, attr)
			if e.Concern.Optional() {
				Expect(headers.Validate(h)).To(Succeed(), e.Subject)
			} else {
				Expect(headers.Validate(h)).NotTo(Succeed(), e.Subject)
			}
			h[attr] = "0190b0c4-0000-7000-8000-000000000001"
			h["ce-dataschema"] = "urn:motionstudio:asyncapi:other#/x"
			Expect(headers.Validate(h)).NotTo(Succeed(), e.Subject)
		}
	})
})

// compile compiles the schema at pointer in an AsyncAPI document.
func compile(raw []byte, pointer string) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	Expect(err).NotTo(HaveOccurred())
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	Expect(c.AddResource("file:///asyncapi.json", doc)).To(Succeed())
	schema, err := c.Compile("file:///asyncapi.json#" + pointer)
	Expect(err).NotTo(HaveOccurred(), pointer)
	return schema
}

// fullPayload is the decoded JSON of a payload of subject with every field set.
func fullPayload(subject string) map[string]any {
	e, ok := events.Lookup(subject)
	Expect(ok).To(BeTrue())
	m := e.New()
	fill(m.ProtoReflect())
	data, err := natsxJSON.Marshal(m)
	Expect(err).NotTo(HaveOccurred())
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	Expect(err).NotTo(HaveOccurred())
	return v.(map[string]any)
}
