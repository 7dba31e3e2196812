package natsx_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("a consumer shutting down", func() {
	const ackWait = 30 * time.Second
	var (
		ctx     context.Context
		stream  string
		subject string
		durable string
	)

	BeforeEach(func() {
		ctx = context.Background()
		stream, subject = newStream()
		durable = unique("d")
	})

	// graceBus connects to the suite's namespace with the given shutdown grace.
	graceBus := func(grace time.Duration) *natsx.Bus {
		b, err := natsx.Connect(ctx, natsx.Config{URL: testkit.NATSURL(), Prefix: bus.Subject(""), ShutdownGrace: grace},
			"natsx-grace", slog.New(slog.NewTextHandler(GinkgoWriter, nil)))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(b.Close)
		return b
	}
	publish := func(n int) []string {
		var ids []string
		for i := range n {
			payload, err := structpb.NewStruct(map[string]any{"n": i})
			Expect(err).NotTo(HaveOccurred())
			ev, err := natsx.NewEvent("test-svc", "t.v1", subject, payload)
			Expect(err).NotTo(HaveOccurred())
			Expect(bus.Publish(ctx, ev)).To(Succeed())
			ids = append(ids, ev.ID)
		}
		return ids
	}
	// startFirst runs a consumer on b whose handler signals started and then runs work.
	startFirst := func(b *natsx.Bus, work func(ctx context.Context) error) (started chan struct{}, stop context.CancelFunc, done chan error) {
		started, done = make(chan struct{}), make(chan error, 1)
		firstCtx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		var seen recorder
		go func() {
			done <- b.Consume(firstCtx, natsx.ConsumerSpec{Stream: stream, Durable: durable, AckWait: ackWait},
				func(ctx context.Context, m natsx.Message) error {
					seen.add(ctx, m)
					if seen.count() == 1 {
						close(started)
					}
					return work(ctx)
				})
		}()
		return started, stop, done
	}

	It("lets a handler that finishes within the grace acknowledge its message", func() {
		publish(1)
		release := make(chan struct{})
		started, stop, done := startFirst(graceBus(5*time.Second), func(context.Context) error {
			<-release
			return nil
		})
		Eventually(started).WithTimeout(5 * time.Second).Should(BeClosed())

		stop()
		Consistently(done, 200*time.Millisecond).ShouldNot(Receive(), "Consume waits for the running handler")
		close(release)
		Eventually(done).WithTimeout(5 * time.Second).Should(Receive(BeNil()))
		Eventually(settled(stream, durable)).Should(Succeed())
	})

	It("naks the message of a handler still running after the grace, and the ones it had not started, for another consumer at once", func() {
		ids := publish(3)
		started, stop, done := startFirst(graceBus(200*time.Millisecond), func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		})
		Eventually(started).WithTimeout(5 * time.Second).Should(BeClosed())

		stopped := time.Now()
		stop()
		Eventually(done).WithTimeout(5 * time.Second).Should(Receive(BeNil()))
		var seen recorder
		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable, AckWait: ackWait}, func(ctx context.Context, m natsx.Message) error {
			seen.add(ctx, m)
			return nil
		})
		Eventually(seen.count).WithTimeout(5*time.Second).Should(Equal(3), "redelivered well before AckWait (%s)", ackWait)
		AddReportEntry("redelivery", fmt.Sprintf("all 3 messages handled by the second consumer %s after the first was stopped", time.Since(stopped)))
		deliveries := map[string]uint64{}
		for _, m := range seen.messages() {
			deliveries[m.ID] = m.Delivery
		}
		Expect(deliveries).To(HaveLen(3))
		Expect(deliveries).To(HaveKeyWithValue(ids[0], BeNumerically(">=", 2)), "the interrupted message was delivered before")
		Expect(deliveries).To(HaveKey(ids[1]))
		Expect(deliveries).To(HaveKey(ids[2]))
		Eventually(settled(stream, durable)).Should(Succeed())
	})
})
