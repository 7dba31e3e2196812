package events_test

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	events "github.com/motionstudio/platform/proto-events"
	agentteamv1 "github.com/motionstudio/platform/proto-events/gen/agentteam/v1"
	contentv1 "github.com/motionstudio/platform/proto-events/gen/content/v1"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
)

var _ = Describe("the event catalogue", func() {
	It("lists every subject once", func() {
		seen := map[string]bool{}
		for _, e := range events.Catalogue() {
			Expect(seen).NotTo(HaveKey(e.Subject))
			seen[e.Subject] = true
		}
	})

	It("names events <service>.<noun>.<verb>.v<N> after their producer and jobs jobs.<service>.<noun>.<verb>", func() {
		prefixes := map[string]string{
			events.SourceIdentity:  "identity",
			events.SourceContent:   "content",
			events.SourceAgentteam: "agentteam",
		}
		const eventName = `^[a-z]+(\.[a-z_]+){2}\.v[0-9]+$`
		const jobName = `^jobs\.[a-z]+(\.[a-z_]+){2}$`
		for _, e := range events.Catalogue() {
			Expect(prefixes).To(HaveKey(e.Source), e.Subject)
			switch e.Kind {
			case events.KindEvent:
				Expect(e.Subject).To(MatchRegexp(eventName))
				Expect(e.Subject).To(HavePrefix(prefixes[e.Source] + "."))
			case events.KindJob:
				Expect(e.Subject).To(MatchRegexp(jobName))
				Expect(e.Subject).To(HavePrefix("jobs." + prefixes[e.Source] + "."))
			default:
				Fail(fmt.Sprintf("%s has unknown kind %q", e.Subject, e.Kind))
			}
		}
	})

	It("carries on each subject a message of the producer's package, named after the event", func() {
		for _, e := range events.Catalogue() {
			desc := e.New().ProtoReflect().Descriptor()
			service := strings.Split(strings.TrimPrefix(e.Subject, "jobs."), ".")[0]
			Expect(string(desc.ParentFile().Package())).To(Equal("motionstudio."+service+".v1"), e.Subject)
			if e.Kind == events.KindEvent {
				tokens := strings.Split(e.Subject, ".")
				Expect(snake(string(desc.Name()))).To(Equal(tokens[1]+"_"+tokens[2]), e.Subject)
			}
		}
	})

	It("finds entries by subject and only those", func() {
		e, ok := events.Lookup(events.SubjectAgentRunJob)
		Expect(ok).To(BeTrue())
		Expect(e.Kind).To(Equal(events.KindJob))
		Expect(e.New()).To(BeAssignableToTypeOf(&agentteamv1.AgentRunJob{}))

		_, ok = events.Lookup("identity.user.deleted.v1")
		Expect(ok).To(BeFalse())
	})
})

var _ = Describe("the streams", func() {
	It("put every subject in exactly one stream", func() {
		for _, e := range events.Catalogue() {
			var holders []string
			for _, st := range events.Streams() {
				for _, f := range st.Subjects {
					if matches(f, e.Subject) {
						holders = append(holders, st.Name)
					}
				}
			}
			Expect(holders).To(HaveLen(1), "subject %s is held by %v", e.Subject, holders)
		}
	})

	It("never overlap each other or the bus's dead-letter subjects", func() {
		streams := append(events.Streams(), events.Stream{Name: "DEADLETTER", Subjects: []string{"dlq.>"}})
		for i, a := range streams {
			for _, b := range streams[i+1:] {
				for _, fa := range a.Subjects {
					for _, fb := range b.Subjects {
						Expect(overlap(fa, fb)).To(BeFalse(), "%s (%s) overlaps %s (%s)", a.Name, fa, b.Name, fb)
					}
				}
			}
		}
	})

	It("have unique names", func() {
		names := map[string]bool{}
		for _, st := range events.Streams() {
			Expect(names).NotTo(HaveKey(st.Name))
			names[st.Name] = true
		}
	})

	It("are named so that durable consumers can be created on them", func() {
		valid := `^[A-Za-z0-9_-]+$`
		for _, st := range events.Streams() {
			Expect(st.Name).To(MatchRegexp(valid))
		}
		for _, d := range []string{events.DurableWebhookFanout, events.DurableWebhookDelivery, events.DurableQuestProgress,
			events.DurableSvgPreviewWorker, events.DurableAgentRunWorker} {
			Expect(d).To(MatchRegexp(valid))
		}
	})

	DescribeTable("the overlap rule the specs above rely on",
		func(a, b string, want bool) {
			Expect(overlap(a, b)).To(Equal(want))
			Expect(overlap(b, a)).To(Equal(want))
		},
		Entry("disjoint prefixes", "identity.>", "content.>", false),
		Entry("same filter", "jobs.>", "jobs.>", true),
		Entry("nested full wildcard", "jobs.>", "jobs.content.>", true),
		Entry("single-token wildcard", "identity.*.created.v1", "identity.api_key.>", true),
		Entry("literal under wildcard", "jobs.identity.webhook.deliver", "jobs.*.webhook.*", true),
		Entry("shorter literal", "jobs", "jobs.>", false),
		Entry("different lengths", "a.b", "a.b.c", false),
	)
})

var _ = Describe("the webhook catalogue", func() {
	It("maps every webhook event to an identity event subject", func() {
		webhooks := events.WebhookEvents()
		Expect(webhooks).NotTo(BeEmpty())
		for name, subject := range webhooks {
			e, ok := events.Lookup(subject)
			Expect(ok).To(BeTrue(), "%s maps to unknown subject %s", name, subject)
			Expect(e.Kind).To(Equal(events.KindEvent))
			Expect(e.Source).To(Equal(events.SourceIdentity))
			Expect(subject).To(HavePrefix("identity." + name + "."))

			back, ok := events.WebhookEventOf(subject)
			Expect(ok).To(BeTrue())
			Expect(back).To(Equal(name))
		}
	})

	It("offers every identity event to webhooks but the internal revocations (sessions, tenant statuses), and nothing else", func() {
		subjects := map[string]bool{}
		for _, s := range events.WebhookEvents() {
			subjects[s] = true
		}
		for _, e := range events.Catalogue() {
			isIdentityEvent := e.Kind == events.KindEvent && e.Source == events.SourceIdentity &&
				e.Subject != events.SubjectSessionRevoked && e.Subject != events.SubjectTenantStatusChanged
			Expect(subjects[e.Subject]).To(Equal(isIdentityEvent), e.Subject)
		}
	})

	It("offers the events tenants subscribe to by name", func() {
		Expect(events.WebhookEvents()).To(HaveKeyWithValue("payment.confirmed", events.SubjectPaymentConfirmed))
		Expect(events.WebhookEvents()).To(HaveKeyWithValue("user.registered", events.SubjectUserRegistered))
		_, ok := events.WebhookEventOf(events.SubjectWebhookDeliveryJob)
		Expect(ok).To(BeFalse())
	})
})

var _ = Describe("payload decoding", func() {
	It("round-trips every message with all fields set through protojson", func() {
		encodings := map[string]protojson.MarshalOptions{
			"as the bus writes it":     {},
			"with snake_case names":    {UseProtoNames: true},
			"with every field present": {UseProtoNames: true, EmitUnpopulated: true},
		}
		for _, e := range events.Catalogue() {
			sent := e.New()
			fill(sent.ProtoReflect())
			for how, opts := range encodings {
				data, err := opts.Marshal(sent)
				Expect(err).NotTo(HaveOccurred())

				got, err := events.Decode(e.Subject, data)
				Expect(err).NotTo(HaveOccurred(), "%s %s", e.Subject, how)
				Expect(proto.Equal(got, sent)).To(BeTrue(), "%s %s: got %v, sent %v", e.Subject, how, got, sent)
			}
		}
	})

	It("carries timestamps as RFC 3339 strings", func() {
		data, err := protojson.Marshal(&contentv1.SvgPreviewGenerated{
			PreviewId:   "p1",
			GeneratedAt: timestamppb.New(mustTime("2026-03-01T10:00:00Z")),
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data)).To(MatchRegexp(`"generatedAt":\s*"2026-03-01T10:00:00Z"`))

		got, err := events.Decode(events.SubjectSvgPreviewGenerated, []byte(`{"generated_at":"2026-03-01T10:00:00Z"}`))
		Expect(err).NotTo(HaveOccurred())
		Expect(got.(*contentv1.SvgPreviewGenerated).GetGeneratedAt().AsTime()).To(Equal(mustTime("2026-03-01T10:00:00Z")))
	})

	It("ignores fields a newer producer added", func() {
		got, err := events.Decode(events.SubjectPaymentFailed,
			[]byte(`{"payment_id":"p1","amountMinor":"1500","added_later":true}`))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(BeAssignableToTypeOf(&identityv1.PaymentFailed{}))
		Expect(got.(*identityv1.PaymentFailed).GetPaymentId()).To(Equal("p1"))
		Expect(got.(*identityv1.PaymentFailed).GetAmountMinor()).To(Equal(int64(1500)))
	})

	It("refuses unknown subjects and malformed payloads", func() {
		_, err := events.Decode("identity.user.deleted.v1", []byte(`{}`))
		Expect(err).To(MatchError(ContainSubstring("unknown subject")))

		_, err = events.Decode(events.SubjectAgentRunJob, []byte(`{"run_id":7}`))
		Expect(err).To(MatchError(ContainSubstring(events.SubjectAgentRunJob)))
	})
})

// matches reports whether the NATS subject filter f matches the literal
// subject s, which is the case when the two overlap.
func matches(f, s string) bool {
	return overlap(f, s)
}

// overlap reports whether some subject matches both NATS subject filters.
func overlap(a, b string) bool {
	ta, tb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(ta) && i < len(tb); i++ {
		switch {
		case ta[i] == ">" || tb[i] == ">":
			return true
		case ta[i] == "*" || tb[i] == "*" || ta[i] == tb[i]:
			continue
		default:
			return false
		}
	}
	return len(ta) == len(tb)
}

// snake turns a Go-style message name such as ApiKeyCreated into api_key_created.
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fill sets every field of m to a non-zero value, so a round trip that drops
// or renames a field shows up as a difference.
func fill(m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsList():
			list := m.Mutable(fd).List()
			list.Append(scalar(fd, 1))
			list.Append(scalar(fd, 2))
		case fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Timestamp":
			m.Set(fd, protoreflect.ValueOfMessage(timestamppb.New(mustTime("2026-01-02T03:04:05.006Z")).ProtoReflect()))
		default:
			m.Set(fd, scalar(fd, i+1))
		}
	}
}

func scalar(fd protoreflect.FieldDescriptor, n int) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fmt.Sprintf("%s-%d", fd.Name(), n))
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(int64(n) * 1_000_000_000_007)
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(int32(n))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	default:
		Fail(fmt.Sprintf("fill: field %s has kind %s the test does not know", fd.FullName(), fd.Kind()))
		return protoreflect.Value{}
	}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	Expect(err).NotTo(HaveOccurred())
	return t
}
