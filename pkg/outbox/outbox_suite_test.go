package outbox_test

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/testkit"
)

func TestOutbox(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "outbox")
}

var (
	db  *gorm.DB
	dsn string
	bus *natsx.Bus
	log *slog.Logger
)

var _ = BeforeSuite(func() {
	db, dsn = testkit.NewDatabase("outbox", outbox.Migrations)
	bus = testkit.Bus("outbox")
	log = slog.New(slog.NewTextHandler(GinkgoWriter, nil))
	// The state a handler changes: one row per time its side effect ran.
	Expect(db.Exec(`CREATE TABLE effects (consumer text NOT NULL, event_id text NOT NULL)`).Error).To(Succeed())
	// The state a producer changes in the same transaction as it writes its event.
	Expect(db.Exec(`CREATE TABLE projects (id text PRIMARY KEY)`).Error).To(Succeed())
})

var _ = BeforeEach(func() {
	testkit.Truncate(db)
})

// unique returns base with a short random suffix, so every spec has its own stream,
// subjects and durable.
func unique(base string) string {
	return base + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
}

// newStream ensures a stream of its own on b for the spec and returns its name and a
// subject on it.
func newStream(b *natsx.Bus) (stream, subject string) {
	stream = unique("S")
	subject = strings.ToLower(stream)
	Expect(b.EnsureStream(context.Background(), natsx.StreamSpec{
		Name: stream, Subjects: []string{subject + ".>"}, Duplicates: time.Hour,
	})).To(Succeed())
	return stream, subject + ".created"
}

// consume runs b.Consume until the spec ends and checks that it then returns nil.
func consume(b *natsx.Bus, spec natsx.ConsumerSpec, h natsx.Handler) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Consume(ctx, spec, h) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
	})
}

// busThroughProxy answers a bus connected to NATS through a proxy that the spec can slow
// down, both closed when the spec ends.
func busThroughProxy() (*testkit.TCPProxy, *natsx.Bus) {
	u, err := url.Parse(testkit.NATSURL())
	Expect(err).NotTo(HaveOccurred())
	proxy := testkit.NewTCPProxy(u.Host)
	return proxy, testkit.BusAt("nats://"+proxy.Addr(), "outbox")
}

// runRelay runs r until the spec ends and checks that it then returns nil.
func runRelay(r *outbox.Relay) {
	testkit.RunUntilCleanup(r.Run)
}

// effectHandler records, through outbox.Once, one effects row per event; it counts how
// often it was called and how often Once skipped a duplicate.
type effectHandler struct {
	consumer string
	mu       sync.Mutex
	calls    int
	skipped  int
	seen     []natsx.Message
	ctxs     []context.Context
	// fail, when set, is returned from inside the transaction for the given delivery.
	fail func(ctx context.Context, m natsx.Message) error
}

func (h *effectHandler) handle(ctx context.Context, m natsx.Message) error {
	h.mu.Lock()
	h.calls++
	h.seen = append(h.seen, m)
	h.ctxs = append(h.ctxs, ctx)
	fail := h.fail
	h.mu.Unlock()
	ran, err := outbox.Once(ctx, db, h.consumer, m.ID, func(tx *gorm.DB) error {
		if err := tx.Exec(`INSERT INTO effects (consumer, event_id) VALUES (?, ?)`, h.consumer, m.ID).Error; err != nil {
			return err
		}
		if fail != nil {
			return fail(ctx, m)
		}
		return nil
	})
	if err == nil && !ran {
		h.mu.Lock()
		h.skipped++
		h.mu.Unlock()
	}
	return err
}

func (h *effectHandler) callCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

func (h *effectHandler) skipCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.skipped
}

func (h *effectHandler) messages() []natsx.Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]natsx.Message(nil), h.seen...)
}

func (h *effectHandler) context(i int) context.Context {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ctxs[i]
}

// effects counts the side effects recorded for eventID by consumer ("" counts every event).
func effects(consumer, eventID string) func() (int64, error) {
	return func() (int64, error) {
		var n int64
		q := db.Table("effects").Where("consumer = ?", consumer)
		if eventID != "" {
			q = q.Where("event_id = ?", eventID)
		}
		err := q.Count(&n).Error
		return n, err
	}
}

// unsent counts outbox rows not yet marked sent.
func unsent() (int64, error) {
	var n int64
	err := db.Table("outbox").Where("sent_at IS NULL").Count(&n).Error
	return n, err
}

// streamMessages is how many messages the stream on b holds.
func streamMessages(b *natsx.Bus, stream string) func() (uint64, error) {
	return func() (uint64, error) {
		s, err := b.JetStream().Stream(context.Background(), b.StreamName(stream))
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
