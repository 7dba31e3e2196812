package natsx_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/testkit"
)

func TestNatsx(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "natsx")
}

var bus *natsx.Bus

var _ = BeforeSuite(func() {
	bus = testkit.Bus("natsx")
})

// unique returns base with a short random suffix, so every spec has its own stream,
// subjects and durable.
func unique(base string) string {
	return base + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
}

// newStream ensures a stream of its own for the spec and returns its name and a subject on it.
func newStream() (stream, subject string) {
	stream = unique("S")
	subject = strings.ToLower(stream)
	Expect(bus.EnsureStream(context.Background(), natsx.StreamSpec{
		Name: stream, Subjects: []string{subject + ".>"}, Duplicates: time.Minute,
	})).To(Succeed())
	return stream, subject + ".happened"
}

// consume runs bus.Consume until the spec ends and checks that it then returns nil.
func consume(spec natsx.ConsumerSpec, h natsx.Handler) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bus.Consume(ctx, spec, h) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
	})
}

// recorder keeps what a handler saw, safe for the handler goroutines.
type recorder struct {
	mu   sync.Mutex
	msgs []natsx.Message
	ctxs []context.Context
}

func (r *recorder) add(ctx context.Context, m natsx.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	r.ctxs = append(r.ctxs, ctx)
}

func (r *recorder) messages() []natsx.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]natsx.Message(nil), r.msgs...)
}

func (r *recorder) count() int { return len(r.messages()) }

func (r *recorder) context(i int) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ctxs[i]
}

// streamMessages is how many messages the stream holds.
func streamMessages(stream string) func() (uint64, error) {
	return func() (uint64, error) {
		s, err := bus.JetStream().Stream(context.Background(), bus.StreamName(stream))
		if err != nil {
			return 0, err
		}
		info, err := s.Info(context.Background())
		if err != nil {
			return 0, err
		}
		return info.State.Msgs, nil
	}
}

// settled reports whether the durable has nothing delivered-but-unacked and nothing pending.
func settled(stream, durable string) func(Gomega) {
	return func(g Gomega) {
		c, err := bus.JetStream().Consumer(context.Background(), bus.StreamName(stream), bus.ConsumerName(durable))
		g.Expect(err).NotTo(HaveOccurred())
		info, err := c.Info(context.Background())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(info.NumAckPending).To(BeZero())
		g.Expect(info.NumPending).To(BeZero())
	}
}

// deadLetters returns the messages on the durable's dead-letter subject.
func deadLetters(durable string) func() ([]jetstream.Msg, error) {
	return func() ([]jetstream.Msg, error) {
		ctx := context.Background()
		c, err := bus.JetStream().CreateConsumer(ctx, bus.StreamName("DEADLETTER"), jetstream.ConsumerConfig{
			FilterSubject: bus.Subject("dlq." + durable),
			AckPolicy:     jetstream.AckNonePolicy,
		})
		if err != nil {
			return nil, err
		}
		defer func() { _ = bus.JetStream().DeleteConsumer(ctx, bus.StreamName("DEADLETTER"), c.CachedInfo().Name) }()
		batch, err := c.FetchNoWait(100)
		if err != nil {
			return nil, err
		}
		var out []jetstream.Msg
		for m := range batch.Messages() {
			out = append(out, m)
		}
		return out, batch.Error()
	}
}
