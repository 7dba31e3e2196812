package natsx_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("messages that cannot be handled", func() {
	var (
		ctx     context.Context
		stream  string
		subject string
		durable string
		calls   atomic.Int32
	)

	BeforeEach(func() {
		ctx = context.Background()
		stream, subject = newStream()
		durable = unique("d")
		calls.Store(0)
	})

	// publishRaw stores a message with exactly the given headers, as a foreign or broken
	// producer would.
	publishRaw := func(h nats.Header, data []byte) {
		_, err := bus.JetStream().PublishMsg(ctx, &nats.Msg{Subject: bus.Subject(subject), Header: h, Data: data})
		Expect(err).NotTo(HaveOccurred())
	}

	ceHeaders := func() nats.Header {
		h := nats.Header{}
		h.Set("ce-id", unique("id"))
		h.Set("ce-type", "t.v1")
		h.Set("ce-source", "test")
		h.Set("ce-specversion", "1.0")
		h.Set("ce-time", time.Now().UTC().Format(time.RFC3339Nano))
		h.Set("content-type", "application/json")
		return h
	}

	counting := func(err error) natsx.Handler {
		return func(context.Context, natsx.Message) error {
			calls.Add(1)
			return err
		}
	}

	It("dead-letters a message without CloudEvents headers, without calling the handler or redelivering it", func() {
		h := nats.Header{}
		h.Set("x-custom", "kept")
		publishRaw(h, []byte(`{"name":"x"}`))

		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable, Backoff: []time.Duration{10 * time.Millisecond}}, counting(nil))

		Eventually(deadLetters(durable)).Should(HaveLen(1))
		dl, err := deadLetters(durable)()
		Expect(err).NotTo(HaveOccurred())
		Expect(dl[0].Headers().Get("dlq-reason")).To(ContainSubstring("poison"))
		Expect(dl[0].Headers().Get("dlq-consumer")).To(Equal(durable))
		Expect(dl[0].Headers().Get("dlq-stream")).To(Equal(bus.StreamName(stream)))
		Expect(dl[0].Headers().Get("dlq-deliveries")).To(Equal("1"))
		Expect(dl[0].Headers().Get("dlq-subject")).To(Equal(subject))
		Expect(dl[0].Headers().Get("x-custom")).To(Equal("kept"))
		Expect(dl[0].Subject()).To(Equal(bus.Subject("dlq." + durable)))
		Expect(string(dl[0].Data())).To(Equal(`{"name":"x"}`))

		Eventually(settled(stream, durable)).Should(Succeed())
		Consistently(calls.Load).WithTimeout(300 * time.Millisecond).Should(BeZero())
		Expect(deadLetters(durable)()).To(HaveLen(1))
	})

	It("dead-letters a message whose payload is not JSON", func() {
		publishRaw(ceHeaders(), []byte("\x00\x01 not json"))

		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable}, counting(nil))

		Eventually(deadLetters(durable)).Should(HaveLen(1))
		dl, err := deadLetters(durable)()
		Expect(err).NotTo(HaveOccurred())
		Expect(dl[0].Headers().Get("dlq-reason")).To(ContainSubstring("payload is not json"))
		Eventually(settled(stream, durable)).Should(Succeed())
		Expect(calls.Load()).To(BeZero())
	})

	It("dead-letters at once a message whose payload does not decode into the handler's type", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, &structpb.Struct{Fields: map[string]*structpb.Value{
			"name": structpb.NewStringValue("x"),
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, ev)).To(Succeed())

		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable, Backoff: []time.Duration{10 * time.Millisecond}},
			func(_ context.Context, m natsx.Message) error {
				calls.Add(1)
				var n wrapperspb.Int64Value
				return m.Decode(&n)
			})

		Eventually(deadLetters(durable)).Should(HaveLen(1))
		dl, err := deadLetters(durable)()
		Expect(err).NotTo(HaveOccurred())
		Expect(dl[0].Headers().Get("dlq-reason")).To(HavePrefix("permanent: "))
		Expect(dl[0].Headers().Get("ce-id")).To(Equal(ev.ID))
		Eventually(settled(stream, durable)).Should(Succeed())
		Consistently(calls.Load).WithTimeout(300 * time.Millisecond).Should(BeEquivalentTo(1))
	})

	It("dead-letters a message on a Permanent handler error without retrying it", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, &structpb.Struct{})
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, ev)).To(Succeed())

		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable, Backoff: []time.Duration{10 * time.Millisecond}},
			counting(natsx.Permanent(errors.New("project was deleted"))))

		Eventually(deadLetters(durable)).Should(HaveLen(1))
		dl, err := deadLetters(durable)()
		Expect(err).NotTo(HaveOccurred())
		Expect(dl[0].Headers().Get("dlq-reason")).To(Equal("permanent: project was deleted"))
		Consistently(calls.Load).WithTimeout(300 * time.Millisecond).Should(BeEquivalentTo(1))
	})

	It("dead-letters a message that fails every one of its MaxDeliver deliveries, and stops redelivering it", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, &structpb.Struct{})
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, ev)).To(Succeed())

		consume(natsx.ConsumerSpec{
			Stream: stream, Durable: durable, MaxDeliver: 3,
			Backoff: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond},
		}, counting(errors.New("downstream refused")))

		Eventually(deadLetters(durable)).Should(HaveLen(1))
		dl, err := deadLetters(durable)()
		Expect(err).NotTo(HaveOccurred())
		Expect(dl[0].Headers().Get("dlq-reason")).To(Equal("failed 3 deliveries: downstream refused"))
		Expect(dl[0].Headers().Get("dlq-deliveries")).To(Equal("3"))
		Expect(dl[0].Headers().Get("ce-id")).To(Equal(ev.ID))
		Expect(dl[0].Headers().Get("ce-type")).To(Equal("t.v1"))
		Eventually(settled(stream, durable)).Should(Succeed())
		Consistently(calls.Load).WithTimeout(300 * time.Millisecond).Should(BeEquivalentTo(3))
	})

	It("dead-letters a message whose last delivery was never settled, without running the handler again", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, &structpb.Struct{})
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, ev)).To(Succeed())

		// A crashed process: it takes the only allowed delivery and never answers.
		c, err := bus.JetStream().CreateOrUpdateConsumer(ctx, bus.StreamName(stream), jetstream.ConsumerConfig{
			Durable:       bus.ConsumerName(durable),
			AckPolicy:     jetstream.AckExplicitPolicy,
			DeliverPolicy: jetstream.DeliverAllPolicy,
			MaxDeliver:    -1,
			AckWait:       200 * time.Millisecond,
			MaxAckPending: 64,
		})
		Expect(err).NotTo(HaveOccurred())
		batch, err := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		Expect(err).NotTo(HaveOccurred())
		Eventually(batch.Messages()).Should(Receive())

		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable, MaxDeliver: 1, AckWait: 200 * time.Millisecond},
			counting(nil))

		Eventually(deadLetters(durable)).WithTimeout(5 * time.Second).Should(HaveLen(1))
		dl, err := deadLetters(durable)()
		Expect(err).NotTo(HaveOccurred())
		Expect(dl[0].Headers().Get("dlq-reason")).To(Equal("max deliveries (1) exceeded"))
		Expect(dl[0].Headers().Get("dlq-deliveries")).To(Equal("2"))
		Eventually(settled(stream, durable)).Should(Succeed())
		Expect(calls.Load()).To(BeZero())
	})

	It("keeps one dead-letter copy per consumer when two consumers give up on the same event", func() {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, &structpb.Struct{})
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(ctx, ev)).To(Succeed())
		other := unique("d")

		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable}, counting(natsx.Permanent(errors.New("no"))))
		consume(natsx.ConsumerSpec{Stream: stream, Durable: other}, counting(natsx.Permanent(errors.New("no"))))

		Eventually(deadLetters(durable)).Should(HaveLen(1))
		Eventually(deadLetters(other)).Should(HaveLen(1))
	})
})

var _ = Describe("a three-node cluster", func() {
	var (
		ctx     context.Context
		nodes   []*testkit.NATSServer
		cluster *natsx.Bus
	)

	BeforeEach(func() {
		ctx = context.Background()
		nodes = testkit.StartNATSCluster(3)
		var err error
		cluster, err = natsx.Connect(ctx, natsx.Config{URL: testkit.ClusterURL(nodes), Prefix: "cluster.",
			Streams: natsx.StreamConfig{Replicas: 3}}, "natsx-cluster", slog.New(slog.NewTextHandler(GinkgoWriter, nil)))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cluster.Close)
	})

	// start consumes stream through b until the spec ends, recording what it handles.
	start := func(b *natsx.Bus, stream string) *recorder {
		var seen recorder
		consumeCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- b.Consume(consumeCtx, natsx.ConsumerSpec{Stream: stream, Durable: unique("d")},
				func(ctx context.Context, m natsx.Message) error {
					seen.add(ctx, m)
					return nil
				})
		}()
		DeferCleanup(func() {
			stop()
			Eventually(done).WithTimeout(20 * time.Second).Should(Receive(BeNil()))
		})
		return &seen
	}
	// publish publishes an event on subject through b, retrying while the stream has no leader.
	publish := func(b *natsx.Bus, subject string) {
		ev, err := natsx.NewEvent("test-svc", "t.v1", subject, &structpb.Struct{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error { return b.Publish(ctx, ev) }).WithTimeout(30 * time.Second).Should(Succeed())
	}
	// leaderOf is the node leading the stream or consumer info describes.
	leaderOf := func(info *jetstream.ClusterInfo) *testkit.NATSServer {
		Expect(info.Leader).To(HavePrefix("node-"))
		return nodes[int(info.Leader[len("node-")]-'1')]
	}

	It("keeps dead letters on every node, so a consumer starts while the dead-letter stream's leader is down", func() {
		stream := unique("CL")
		Expect(cluster.EnsureStream(ctx, cluster.StreamSpec(stream, []string{strings.ToLower(stream) + ".>"}, false))).To(Succeed())
		first := start(cluster, stream)
		publish(cluster, strings.ToLower(stream)+".happened")
		Eventually(first.count).WithTimeout(10 * time.Second).Should(Equal(1))

		dlq, err := cluster.JetStream().Stream(ctx, cluster.StreamName("DEADLETTER"))
		Expect(err).NotTo(HaveOccurred())
		info, err := dlq.Info(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Config.Replicas).To(Equal(3))
		leaderOf(info.Cluster).Stop()

		// A new stream and consumer leader is elected first; on a loaded 2-core machine that has
		// taken more than 30 s of raft timeouts.
		second := start(cluster, stream)
		Eventually(second.count).WithTimeout(90 * time.Second).Should(Equal(1))
	})

	It("has a consumer pull again within seconds when the node holding it comes back", func() {
		// One replica: while its node is down the consumer has no leader, so a pull is lost or
		// answered "no responders", and nothing would pull again for 30 s by nats.go's defaults.
		stream := unique("R1")
		subject := strings.ToLower(stream) + ".happened"
		Expect(cluster.EnsureStream(ctx, natsx.StreamSpec{Name: stream, Subjects: []string{strings.ToLower(stream) + ".>"}, Replicas: 1})).To(Succeed())
		s, err := cluster.JetStream().Stream(ctx, cluster.StreamName(stream))
		Expect(err).NotTo(HaveOccurred())
		info, err := s.Info(ctx)
		Expect(err).NotTo(HaveOccurred())
		holder := leaderOf(info.Cluster)
		// The consuming process stays connected to another node throughout, as a service's does
		// when a node it is not connected to restarts.
		via := nodes[0]
		if via == holder {
			via = nodes[1]
		}
		own, err := natsx.Connect(ctx, natsx.Config{URL: via.URL(), Prefix: "cluster."}, "natsx-cluster-own",
			slog.New(slog.NewTextHandler(GinkgoWriter, nil)))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(own.Close)
		seen := start(own, stream)
		publish(own, subject)
		Eventually(seen.count).WithTimeout(10 * time.Second).Should(Equal(1))

		holder.Stop()
		holder.Start()
		publish(own, subject)
		// Two missed heartbeats (6 s) and a pull again, twice at most while the node recovers.
		Eventually(seen.count).WithTimeout(12 * time.Second).Should(Equal(2))
	})
})
