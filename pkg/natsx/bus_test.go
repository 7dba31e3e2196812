package natsx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/pkg/logx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("publishing and consuming events", func() {
	var (
		ctx     context.Context
		stream  string
		subject string
		durable string
		payload *structpb.Struct
	)

	BeforeEach(func() {
		ctx = context.Background()
		stream, subject = newStream()
		durable = unique("d")
		var err error
		payload, err = structpb.NewStruct(map[string]any{"name": "Intro", "frames": 240})
		Expect(err).NotTo(HaveOccurred())
	})

	It("delivers the event's CloudEvents attributes and protojson payload to the handler", func() {
		ev, err := natsx.NewEvent("test-svc", "content.project.created.v1", subject, payload)
		Expect(err).NotTo(HaveOccurred())
		ev.DataSchema = "urn:motionstudio:asyncapi:test-svc#/components/schemas/test.Project"
		ev.TenantID = "0190b0c4-0000-7000-8000-000000000001"
		Expect(bus.Publish(ctx, ev)).To(Succeed())

		var seen recorder
		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable}, func(ctx context.Context, m natsx.Message) error {
			seen.add(ctx, m)
			return nil
		})

		Eventually(seen.count).Should(Equal(1))
		m := seen.messages()[0]
		Expect(m.ID).To(Equal(ev.ID))
		Expect(m.Type).To(Equal("content.project.created.v1"))
		Expect(m.Source).To(Equal("test-svc"))
		Expect(m.Subject).To(Equal(subject))
		Expect(m.Time).To(BeTemporally("==", ev.Time))
		Expect(m.Delivery).To(BeEquivalentTo(1))
		Expect(m.Header.Get("ce-specversion")).To(Equal("1.0"))
		Expect(m.Header.Get("content-type")).To(Equal("application/json"))
		Expect(m.Header.Get("Nats-Msg-Id")).To(Equal(ev.ID))
		Expect(m.DataSchema).To(Equal(ev.DataSchema))
		Expect(m.Header.Get("ce-dataschema")).To(Equal(ev.DataSchema))
		Expect(m.TenantID).To(Equal(ev.TenantID))
		Expect(m.Header.Get("ce-tenantid")).To(Equal(ev.TenantID))
		Expect(m.OrganizationID).To(BeEmpty())
		Expect(m.Header).NotTo(HaveKey("ce-organizationid"), "an unset attribute is left out")

		var got structpb.Struct
		Expect(m.Decode(&got)).To(Succeed())
		Expect(proto.Equal(&got, payload)).To(BeTrue())
		Eventually(settled(stream, durable)).Should(Succeed())
	})

	It("publishes under the bus prefix, so other prefixes never see the event", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, payload)
		Expect(err).NotTo(HaveOccurred())
		sub, err := bus.Conn().SubscribeSync(bus.Subject(subject))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(sub.Unsubscribe)

		Expect(bus.Publish(ctx, ev)).To(Succeed())

		msg, err := sub.NextMsg(5 * time.Second)
		Expect(err).NotTo(HaveOccurred())
		Expect(msg.Subject).To(Equal(bus.Subject(subject)))
		Expect(msg.Subject).NotTo(Equal(subject))
	})

	It("stores an event published twice only once", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, payload)
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, ev)).To(Succeed())
		Expect(bus.Publish(ctx, ev)).To(Succeed())

		other, err := natsx.NewEvent("test-svc", "t.v1", subject, payload)
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, other)).To(Succeed())

		Expect(streamMessages(stream)()).To(BeEquivalentTo(2))
	})

	It("redelivers an event after the handler fails, with the delivery count, until it succeeds", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, payload)
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, ev)).To(Succeed())

		var seen recorder
		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable, Backoff: []time.Duration{20 * time.Millisecond}},
			func(ctx context.Context, m natsx.Message) error {
				seen.add(ctx, m)
				if m.Delivery < 3 {
					return errors.New("database busy")
				}
				return nil
			})

		Eventually(seen.count).Should(Equal(3))
		deliveries := []uint64{}
		for _, m := range seen.messages() {
			Expect(m.ID).To(Equal(ev.ID))
			deliveries = append(deliveries, m.Delivery)
		}
		Expect(deliveries).To(Equal([]uint64{1, 2, 3}))
		Eventually(settled(stream, durable)).Should(Succeed())
		Consistently(seen.count).WithTimeout(300 * time.Millisecond).Should(Equal(3))
		Expect(deadLetters(durable)()).To(BeEmpty())
	})

	It("waits the backoff for the failed delivery before redelivering", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, payload)
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, ev)).To(Succeed())

		var seen recorder
		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable, Backoff: []time.Duration{time.Second}},
			func(ctx context.Context, m natsx.Message) error {
				seen.add(ctx, m)
				if m.Delivery == 1 {
					return errors.New("not yet")
				}
				return nil
			})

		Eventually(seen.count).Should(Equal(1))
		Consistently(seen.count).WithTimeout(700 * time.Millisecond).Should(Equal(1))
		Eventually(seen.count).WithTimeout(5 * time.Second).Should(Equal(2))
	})

	It("redelivers a job's wake-up when the lease another worker holds on the job ends", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, payload)
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, ev)).To(Succeed())

		var seen recorder
		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable, Backoff: []time.Duration{time.Minute}},
			func(ctx context.Context, m natsx.Message) error {
				seen.add(ctx, m)
				if m.Delivery == 1 {
					return fmt.Errorf("claim: %w", jobs.HeldError{Until: time.Now().Add(500 * time.Millisecond)})
				}
				return nil
			})

		Eventually(seen.count).Should(Equal(1))
		Consistently(seen.count).WithTimeout(700 * time.Millisecond).Should(Equal(1))
		Eventually(seen.count).WithTimeout(5 * time.Second).Should(Equal(2))
	})

	It("delivers only the subjects the consumer filters on", func() {
		wanted, err := natsx.NewEvent("test-svc", "t.v1", subject, payload)
		Expect(err).NotTo(HaveOccurred())
		unwanted, err := natsx.NewEvent("test-svc", "t.v1", subject+"_not", payload)
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, unwanted)).To(Succeed())
		Expect(bus.Publish(ctx, wanted)).To(Succeed())

		var seen recorder
		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable, FilterSubjects: []string{subject}},
			func(ctx context.Context, m natsx.Message) error {
				seen.add(ctx, m)
				return nil
			})

		Eventually(seen.count).Should(Equal(1))
		Expect(seen.messages()[0].ID).To(Equal(wanted.ID))
		Consistently(seen.count).WithTimeout(300 * time.Millisecond).Should(Equal(1))
	})

	It("carries the publisher's trace context into the handler's context", func() {
		traceID := trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
		spanID := trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
		pubCtx := trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled,
		}))
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, payload)
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(pubCtx, ev)).To(Succeed())

		var (
			seen recorder
			logs bytes.Buffer
		)
		handlerLog := logx.New(&logs, "test-svc", "info")
		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable}, func(ctx context.Context, m natsx.Message) error {
			handlerLog.InfoContext(ctx, "handled") // before add, whose lock orders it before the reads below
			seen.add(ctx, m)
			return nil
		})

		Eventually(seen.count).Should(Equal(1))
		Expect(seen.messages()[0].Header.Get("traceparent")).To(Equal("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
		var line map[string]any
		Expect(json.Unmarshal(logs.Bytes(), &line)).To(Succeed(), logs.String())
		Expect(line).To(HaveKeyWithValue("trace_id", traceID.String()), "a handler's log line carries the trace id")
		Expect(line).To(HaveKeyWithValue("event_id", ev.ID))
		sc := trace.SpanContextFromContext(seen.context(0))
		Expect(sc.TraceID()).To(Equal(traceID))
		Expect(sc.SpanID()).To(Equal(spanID))
		Expect(sc.IsSampled()).To(BeTrue())
		Expect(sc.IsRemote()).To(BeTrue())
	})

	It("runs up to Concurrency handlers at once", func() {
		for range 3 {
			ev, err := natsx.NewEvent("test-svc", "t.v1", subject, payload)
			Expect(err).NotTo(HaveOccurred())
			Expect(bus.Publish(ctx, ev)).To(Succeed())
		}
		release := make(chan struct{})
		var seen recorder
		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable, Concurrency: 3}, func(ctx context.Context, m natsx.Message) error {
			seen.add(ctx, m)
			<-release
			return nil
		})

		Eventually(seen.count).Should(Equal(3))
		close(release)
		Eventually(settled(stream, durable)).Should(Succeed())
	})

	It("hands a message whose handler was interrupted by shutdown to the next consumer", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, payload)
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, ev)).To(Succeed())

		firstCtx, stopFirst := context.WithCancel(ctx)
		started := make(chan struct{})
		firstDone := make(chan error, 1)
		go func() {
			firstDone <- bus.Consume(firstCtx, natsx.ConsumerSpec{Stream: stream, Durable: durable},
				func(ctx context.Context, m natsx.Message) error {
					close(started)
					<-ctx.Done()
					return ctx.Err()
				})
		}()
		Eventually(started).WithTimeout(5 * time.Second).Should(BeClosed())
		stopFirst()
		Eventually(firstDone).WithTimeout(5 * time.Second).Should(Receive(BeNil()))

		var seen recorder
		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable}, func(ctx context.Context, m natsx.Message) error {
			seen.add(ctx, m)
			return nil
		})
		Eventually(seen.count).WithTimeout(5 * time.Second).Should(Equal(1))
		Expect(seen.messages()[0].ID).To(Equal(ev.ID))
	})
})

var _ = Describe("a stream and a consumer set up while NATS is down", func() {
	It("are set up once NATS is back, and the consumer consumes, instead of stopping the service", func() {
		ctx := context.Background()
		server := testkit.StartNATSServer()
		own := testkit.BusAt(server.URL(), "natsx_outage")
		stream := unique("OUT")
		subject := strings.ToLower(stream) + ".happened"
		server.Stop()

		consumeCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		var seen recorder
		go func() {
			if err := own.EnsureStream(consumeCtx, natsx.StreamSpec{Name: stream, Subjects: []string{strings.ToLower(stream) + ".>"}}); err != nil {
				done <- err
				return
			}
			done <- own.Consume(consumeCtx, natsx.ConsumerSpec{Stream: stream, Durable: unique("d")}, func(ctx context.Context, m natsx.Message) error {
				seen.add(ctx, m)
				return nil
			})
		}()
		DeferCleanup(func() {
			stop()
			Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
		})
		// Longer than a JetStream request waits for its answer.
		Consistently(done).WithTimeout(6 * time.Second).ShouldNot(Receive())

		server.Start()
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, &structpb.Struct{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error { return own.Publish(ctx, ev) }).WithTimeout(10 * time.Second).Should(Succeed())
		Eventually(seen.count).WithTimeout(30 * time.Second).Should(Equal(1))
		Expect(seen.messages()[0].ID).To(Equal(ev.ID))
	})
})

var _ = Describe("the bus connection", func() {
	It("is ready while NATS and JetStream answer", func() {
		Expect(bus.Ping(context.Background())).To(Succeed())
	})

	It("fails to connect, as Unavailable, when NATS is not there", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := natsx.Connect(ctx, natsx.Config{URL: "nats://127.0.0.1:1"}, "test", slog.New(slog.DiscardHandler))
		Expect(err).To(HaveOccurred())
		Expect(apperr.Is(err, apperr.Unavailable)).To(BeTrue())
	})

	It("refuses to publish, as Unavailable, to a subject no stream stores", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", unique("nostream")+".x", &structpb.Struct{})
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err = bus.Publish(ctx, ev)
		Expect(err).To(HaveOccurred())
		Expect(apperr.Is(err, apperr.Unavailable)).To(BeTrue())
	})

	It("updates an existing stream's settings in place", func() {
		ctx := context.Background()
		stream, subject := newStream()
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, &structpb.Struct{})
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, ev)).To(Succeed())

		Expect(bus.EnsureStream(ctx, natsx.StreamSpec{
			Name: stream, Subjects: []string{subject}, MaxAge: time.Hour, Duplicates: time.Minute,
		})).To(Succeed())

		s, err := bus.JetStream().Stream(ctx, bus.StreamName(stream))
		Expect(err).NotTo(HaveOccurred())
		info, err := s.Info(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Config.MaxAge).To(Equal(time.Hour))
		Expect(info.Config.Subjects).To(Equal([]string{bus.Subject(subject)}))
		Expect(info.State.Msgs).To(BeEquivalentTo(1))
	})

	It("names streams with the prefix made safe for stream names", func() {
		Expect(bus.StreamName("EVENTS")).To(MatchRegexp(`^[A-Za-z0-9_-]+EVENTS$`))
		Expect(bus.Subject("a.b")).To(HaveSuffix(".a.b"))
	})
})
