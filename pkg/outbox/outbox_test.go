package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
	agentteamv1 "github.com/motionstudio/platform/proto-events/gen/agentteam/v1"
	contentv1 "github.com/motionstudio/platform/proto-events/gen/content/v1"
)

// testTenant is the tenant the events of createProject concern.
const testTenant = "0190b0c4-0000-7000-8000-00000000000a"

// createProject is a producer's use case: it changes state and records the event in one
// transaction, failing (and so rolling back) when fail is set. The event is a catalogue event
// (the outbox takes no other) on the test's own subject.
func createProject(ctx context.Context, w *outbox.Writer, subject, id string, fail error) (string, error) {
	var eventID string
	err := pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
		if err := tx.Exec(`INSERT INTO projects (id) VALUES (?)`, id).Error; err != nil {
			return err
		}
		var err error
		eventID, err = w.Add(ctx, tx, subject, events.SubjectSvgPreviewGenerated,
			&contentv1.SvgPreviewGenerated{PreviewId: id, TenantId: testTenant})
		if err != nil {
			return err
		}
		return fail
	})
	return eventID, err
}

var _ = Describe("an event written to the outbox", func() {
	var (
		ctx     context.Context
		writer  *outbox.Writer
		relay   *outbox.Relay
		stream  string
		subject string
		durable string
		handler *effectHandler
	)

	BeforeEach(func() {
		ctx = context.Background()
		writer = outbox.NewWriter("content-svc")
		relay = outbox.NewRelay(db, bus, log, outbox.RelayConfig{})
		stream, subject = newStream(bus)
		durable = unique("d")
		handler = &effectHandler{consumer: durable}
	})

	It("reaches the consumer's handler with its attributes and payload, and is marked sent", func() {
		id, err := createProject(ctx, writer, subject, "p1", nil)
		Expect(err).NotTo(HaveOccurred())

		Expect(relay.Flush(ctx)).To(Equal(1))
		consume(bus, natsx.ConsumerSpec{Stream: stream, Durable: durable}, handler.handle)

		Eventually(effects(durable, id)).Should(BeEquivalentTo(1))
		m := handler.messages()[0]
		Expect(m.ID).To(Equal(id))
		Expect(m.Type).To(Equal(events.SubjectSvgPreviewGenerated))
		Expect(m.Source).To(Equal("content-svc"))
		Expect(m.Subject).To(Equal(subject))
		var got contentv1.SvgPreviewGenerated
		Expect(m.Decode(&got)).To(Succeed())
		Expect(got.GetPreviewId()).To(Equal("p1"))
		Expect(unsent()).To(BeZero())
	})

	It("carries the catalogue's data schema and the tenant or organization its payload names", func() {
		entry, _ := events.Lookup(events.SubjectTaskMoved)
		var ids []string
		Expect(pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
			id, err := writer.Add(ctx, tx, subject, events.SubjectTaskMoved,
				&agentteamv1.TaskMoved{TaskId: "t1", OrganizationId: "0190b0c4-0000-7000-8000-00000000000b"})
			ids = append(ids, id)
			return err
		})).To(Succeed())
		tenantEvent, err := createProject(ctx, writer, subject, "p1", nil)
		Expect(err).NotTo(HaveOccurred())

		Expect(relay.Flush(ctx)).To(Equal(2))
		consume(bus, natsx.ConsumerSpec{Stream: stream, Durable: durable}, handler.handle)
		Eventually(handler.callCount).Should(Equal(2))
		byID := map[string]natsx.Message{}
		for _, m := range handler.messages() {
			byID[m.ID] = m
		}

		m := byID[ids[0]]
		Expect(m.DataSchema).To(Equal(entry.DataSchema()))
		Expect(m.Header.Get("ce-dataschema")).To(Equal(
			"urn:motionstudio:asyncapi:agentteam-svc#/components/schemas/motionstudio.agentteam.v1.TaskMoved"))
		Expect(m.Header.Get("ce-organizationid")).To(Equal("0190b0c4-0000-7000-8000-00000000000b"))
		Expect(m.OrganizationID).To(Equal("0190b0c4-0000-7000-8000-00000000000b"))
		Expect(m.Header).NotTo(HaveKey("ce-tenantid"))

		m = byID[tenantEvent]
		Expect(m.Header.Get("ce-dataschema")).To(HaveSuffix("#/components/schemas/motionstudio.content.v1.SvgPreviewGenerated"))
		Expect(m.Header.Get("ce-tenantid")).To(Equal(testTenant))
		Expect(m.TenantID).To(Equal(testTenant))
		Expect(m.Header).NotTo(HaveKey("ce-organizationid"))
	})

	It("is refused outside the catalogue, with another subject's payload, or without whom it concerns", func() {
		for _, add := range []func(tx *gorm.DB) error{
			func(tx *gorm.DB) error {
				_, err := writer.Add(ctx, tx, subject, "content.project.created.v1", &contentv1.SvgPreviewGenerated{})
				return err
			},
			func(tx *gorm.DB) error {
				_, err := writer.Add(ctx, tx, subject, events.SubjectTaskMoved, &contentv1.SvgPreviewGenerated{})
				return err
			},
			func(tx *gorm.DB) error {
				_, err := writer.Add(ctx, tx, subject, events.SubjectRunFailed, &agentteamv1.RunFailed{RunId: "r1"})
				return err
			},
		} {
			Expect(pgdb.InTx(ctx, db, add)).NotTo(Succeed())
		}
		Expect(unsent()).To(BeZero())
	})

	It("has its side effect once, even when the relay and others publish it again", func() {
		id, err := createProject(ctx, writer, subject, "p1", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(relay.Flush(ctx)).To(Equal(1))
		consume(bus, natsx.ConsumerSpec{Stream: stream, Durable: durable}, handler.handle)
		Eventually(effects(durable, id)).Should(BeEquivalentTo(1))

		By("the relay publishing the row a second time, as after a crash before marking it sent")
		Expect(db.Exec(`UPDATE outbox SET sent_at = NULL WHERE id = ?`, id).Error).To(Succeed())
		Expect(relay.Flush(ctx)).To(Equal(1))

		By("publishing the same event id directly, twice")
		var row struct {
			Type, Source, Subject string
			Data                  []byte
		}
		Expect(db.Raw(`SELECT type, source, subject, data FROM outbox WHERE id = ?`, id).Scan(&row).Error).To(Succeed())
		again := natsx.Event{ID: id, Type: row.Type, Source: row.Source, Subject: row.Subject, Time: time.Now(), Data: row.Data}
		Expect(bus.Publish(ctx, again)).To(Succeed())
		Expect(bus.Publish(ctx, again)).To(Succeed())
		Expect(streamMessages(bus, stream)()).To(BeEquivalentTo(1))

		By("a copy that slips past JetStream's de-duplication with another Nats-Msg-Id")
		h := nats.Header{}
		for _, k := range []string{"ce-id", "ce-type", "ce-source", "ce-specversion", "content-type"} {
			h.Set(k, handler.messages()[0].Header.Get(k))
		}
		h.Set("Nats-Msg-Id", "copy-of-"+id)
		_, err = bus.JetStream().PublishMsg(ctx, &nats.Msg{Subject: bus.Subject(subject), Header: h, Data: row.Data})
		Expect(err).NotTo(HaveOccurred())

		Eventually(handler.skipCount).Should(Equal(1))
		Expect(handler.callCount()).To(Equal(2))
		Consistently(effects(durable, id)).WithTimeout(300 * time.Millisecond).Should(BeEquivalentTo(1))
	})

	It("is redelivered when the handler fails before acking, and its side effect then happens once", func() {
		handler.fail = func(_ context.Context, m natsx.Message) error {
			if m.Delivery == 1 {
				return errors.New("lost the database connection")
			}
			return nil
		}
		id, err := createProject(ctx, writer, subject, "p1", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(relay.Flush(ctx)).To(Equal(1))

		consume(bus, natsx.ConsumerSpec{Stream: stream, Durable: durable, Backoff: []time.Duration{10 * time.Millisecond}}, handler.handle)

		Eventually(effects(durable, id)).Should(BeEquivalentTo(1))
		Expect(handler.callCount()).To(Equal(2))
		Expect(handler.messages()[1].Delivery).To(BeEquivalentTo(2))
		Consistently(effects(durable, id)).WithTimeout(300 * time.Millisecond).Should(BeEquivalentTo(1))
	})

	It("is redelivered to another process when the handling process stops before acking", func() {
		id, err := createProject(ctx, writer, subject, "p1", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(relay.Flush(ctx)).To(Equal(1))

		firstCtx, stopFirst := context.WithCancel(ctx)
		started := make(chan struct{})
		firstDone := make(chan error, 1)
		first := &effectHandler{consumer: durable, fail: func(ctx context.Context, _ natsx.Message) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}}
		go func() {
			firstDone <- bus.Consume(firstCtx, natsx.ConsumerSpec{Stream: stream, Durable: durable}, first.handle)
		}()
		Eventually(started).WithTimeout(5 * time.Second).Should(BeClosed())
		stopFirst()
		Eventually(firstDone).WithTimeout(5 * time.Second).Should(Receive(BeNil()))
		Expect(effects(durable, id)()).To(BeZero())

		consume(bus, natsx.ConsumerSpec{Stream: stream, Durable: durable}, handler.handle)
		Eventually(effects(durable, id)).WithTimeout(5 * time.Second).Should(BeEquivalentTo(1))
	})

	It("goes out at once, not after the relay's interval, from a writer that notifies the relay", func() {
		slow := outbox.NewRelay(db, bus, log, outbox.RelayConfig{Interval: time.Hour})
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- slow.Run(runCtx) }()
		DeferCleanup(func() {
			cancel()
			Eventually(done).Should(Receive(BeNil()))
		})
		Eventually(unsent).Should(BeZero())
		consume(bus, natsx.ConsumerSpec{Stream: stream, Durable: durable}, handler.handle)

		id, err := createProject(ctx, outbox.NewWriter("content-svc").Notify(slow.Kick), subject, "p1", nil)
		Expect(err).NotTo(HaveOccurred())
		// Well under the relay's hour, with room for a loaded CI machine (2 s was not, at load 13).
		Eventually(effects(durable, id)).WithTimeout(10 * time.Second).Should(BeEquivalentTo(1))
	})

	It("is never published when its transaction rolls back", func() {
		_, err := createProject(ctx, writer, subject, "p1", errors.New("validation failed"))
		Expect(err).To(MatchError("validation failed"))

		Expect(unsent()).To(BeZero())
		Expect(relay.Flush(ctx)).To(BeZero())
		Expect(streamMessages(bus, stream)()).To(BeZero())
		var projects int64
		Expect(db.Table("projects").Count(&projects).Error).To(Succeed())
		Expect(projects).To(BeZero())
	})

	It("must be added inside a transaction", func() {
		_, err := writer.Add(ctx, db, subject, events.SubjectSvgPreviewGenerated, &contentv1.SvgPreviewGenerated{})
		Expect(err).To(HaveOccurred())
		Expect(unsent()).To(BeZero())
	})

	It("carries the writer's trace context to the handler", func() {
		traceID := trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
		spanID := trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
		reqCtx := trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled,
		}))
		_, err := createProject(reqCtx, writer, subject, "p1", nil)
		Expect(err).NotTo(HaveOccurred())

		Expect(relay.Flush(ctx)).To(Equal(1))
		consume(bus, natsx.ConsumerSpec{Stream: stream, Durable: durable}, handler.handle)

		Eventually(handler.callCount).Should(Equal(1))
		sc := trace.SpanContextFromContext(handler.context(0))
		Expect(sc.TraceID()).To(Equal(traceID))
		Expect(sc.SpanID()).To(Equal(spanID))
		Expect(sc.IsSampled()).To(BeTrue())
	})
})

// consumedIDs consumes the stream with a durable of its own until n events were handled, and
// returns their ids in the order they arrived.
func consumedIDs(stream string, n int) []string {
	GinkgoHelper()
	handler := &effectHandler{consumer: unique("d")}
	consume(bus, natsx.ConsumerSpec{Stream: stream, Durable: handler.consumer}, handler.handle)
	Eventually(effects(handler.consumer, "")).Should(BeEquivalentTo(n))
	var got []string
	for _, m := range handler.messages() {
		got = append(got, m.ID)
	}
	return got
}

var _ = Describe("the relay", func() {
	var (
		ctx     context.Context
		writer  *outbox.Writer
		stream  string
		subject string
	)

	BeforeEach(func() {
		ctx = context.Background()
		writer = outbox.NewWriter("content-svc")
		stream, subject = newStream(bus)
	})

	It("publishes events in the order they were written", func() {
		var ids []string
		for i := range 25 {
			id, err := createProject(ctx, writer, subject, fmt.Sprintf("p%02d", i), nil)
			Expect(err).NotTo(HaveOccurred())
			ids = append(ids, id)
		}
		relay := outbox.NewRelay(db, bus, log, outbox.RelayConfig{BatchSize: 10})
		Expect(relay.Flush(ctx)).To(Equal(10))
		Expect(relay.Flush(ctx)).To(Equal(10))
		Expect(relay.Flush(ctx)).To(Equal(5))
		Expect(relay.Flush(ctx)).To(Equal(0))

		Expect(consumedIDs(stream, len(ids))).To(Equal(ids))
	})

	It("publishes, when it stops beside a server, the events the server wrote while draining", func() {
		// An hour's interval: only the first pass, at start, and the last one run.
		relay := outbox.NewRelay(db, bus, log, outbox.RelayConfig{BatchSize: 10, Interval: time.Hour})
		serverCtx, stop := context.WithCancel(ctx)
		var ids []string
		served := make(chan error, 1)
		go func() {
			served <- relay.Beside(serverCtx, func(ctx context.Context) error {
				<-ctx.Done()
				for i := range 15 {
					id, err := createProject(context.WithoutCancel(ctx), writer, subject, fmt.Sprintf("d%02d", i), nil)
					if err != nil {
						return err
					}
					ids = append(ids, id)
				}
				return nil
			})
		}()
		stop()
		Eventually(served).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
		var unsent int64
		Expect(db.Raw(`SELECT count(*) FROM outbox WHERE sent_at IS NULL`).Scan(&unsent).Error).To(Succeed())
		Expect(unsent).To(BeZero())

		Expect(consumedIDs(stream, len(ids))).To(Equal(ids))
	})

	It("keeps an event it cannot publish, with the error, and the events after it, for a later pass", func() {
		orphan := unique("nostream") + ".created"
		first, err := createProject(ctx, writer, orphan, "p1", nil)
		Expect(err).NotTo(HaveOccurred())
		_, err = createProject(ctx, writer, subject, "p2", nil)
		Expect(err).NotTo(HaveOccurred())

		relay := outbox.NewRelay(db, bus, log, outbox.RelayConfig{})
		n, err := relay.Flush(ctx)
		Expect(err).To(HaveOccurred())
		Expect(n).To(BeZero())
		var row struct {
			Attempts  int
			LastError string
		}
		Expect(db.Raw(`SELECT attempts, last_error FROM outbox WHERE id = ?`, first).Scan(&row).Error).To(Succeed())
		Expect(row.Attempts).To(Equal(1))
		Expect(row.LastError).NotTo(BeEmpty())
		Expect(unsent()).To(BeEquivalentTo(2))
		Expect(streamMessages(bus, stream)()).To(BeZero())

		By("a stream for the subject appearing")
		Expect(bus.EnsureStream(ctx, natsx.StreamSpec{Name: unique("S"), Subjects: []string{orphan}})).To(Succeed())
		Expect(relay.Flush(ctx)).To(Equal(2))
		Expect(unsent()).To(BeZero())
	})

	It("marks sent the events it published before its time ran out, on a bus too slow for a whole batch", func() {
		const n = 60
		for i := range n {
			_, err := createProject(ctx, writer, subject, fmt.Sprintf("p%02d", i), nil)
			Expect(err).NotTo(HaveOccurred())
		}
		proxy, slowBus := busThroughProxy()
		relay := outbox.NewRelay(db, slowBus, log, outbox.RelayConfig{})
		proxy.Slow(50 * time.Millisecond)

		budget, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		published, err := relay.Flush(budget)
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(published).To(BeNumerically(">", 0))
		Expect(published).To(BeNumerically("<", n))
		Expect(unsent()).To(BeEquivalentTo(n - published))

		By("the bus keeping up again")
		proxy.Slow(0)
		Expect(relay.Flush(ctx)).To(Equal(n - published))
		Expect(unsent()).To(BeZero())
		Expect(streamMessages(bus, stream)()).To(BeEquivalentTo(n))
	})

	It("retries at its interval, not after a growing backoff, while each pass on a slow bus publishes part of a batch", func() {
		const n = 150 // about 60 rows a five-second pass at 80 ms a publish: two passes run out of time
		for i := range n {
			_, err := createProject(ctx, writer, subject, fmt.Sprintf("p%03d", i), nil)
			Expect(err).NotTo(HaveOccurred())
		}
		proxy, slowBus := busThroughProxy()
		proxy.Slow(80 * time.Millisecond)
		logs := gbytes.NewBuffer()
		runRelay(outbox.NewRelay(db, slowBus, slog.New(slog.NewJSONHandler(logs, nil)),
			outbox.RelayConfig{Interval: 50 * time.Millisecond}))

		Eventually(unsent).WithTimeout(40 * time.Second).Should(BeZero())
		Expect(streamMessages(bus, stream)()).To(BeEquivalentTo(n))
		var failed []map[string]any
		for _, r := range testkit.LogRecords(logs.Contents()) {
			if published, _ := r["published"].(float64); r["msg"] == "outbox relay pass failed" && published > 0 {
				failed = append(failed, r)
			}
		}
		Expect(len(failed)).To(BeNumerically(">=", 2), string(logs.Contents()))
		for _, f := range failed {
			Expect(f["failures"]).To(BeEquivalentTo(1), "a pass that published rows restarts the backoff")
		}
	})

	It("publishes each row once when two relays share the outbox", func() {
		const n = 200
		for i := range n {
			_, err := createProject(ctx, writer, subject, fmt.Sprintf("p%03d", i), nil)
			Expect(err).NotTo(HaveOccurred())
		}
		cfg := outbox.RelayConfig{BatchSize: 7, Interval: 10 * time.Millisecond}
		runRelay(outbox.NewRelay(db, bus, log, cfg))
		runRelay(outbox.NewRelay(db, bus, log, cfg))

		Eventually(unsent).WithTimeout(20 * time.Second).Should(BeZero())
		var attempts []int
		Expect(db.Raw(`SELECT attempts FROM outbox`).Scan(&attempts).Error).To(Succeed())
		Expect(attempts).To(HaveLen(n))
		Expect(attempts).To(HaveEach(1))
		Expect(streamMessages(bus, stream)()).To(BeEquivalentTo(n))
	})

	It("skips the rows another relay holds, without waiting for it", func() {
		for i := range 6 {
			_, err := createProject(ctx, writer, subject, fmt.Sprintf("p%d", i), nil)
			Expect(err).NotTo(HaveOccurred())
		}
		// The other relay runs in another process, on a pool of its own.
		otherPool, err := pgdb.Open(ctx, pgdb.Config{DSN: dsn, MaxOpenConns: 1, MaxIdleConns: 1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(pgdb.Close, otherPool)
		other := otherPool.Begin()
		DeferCleanup(func() { other.Rollback() })
		var held []string
		Expect(other.Raw(`SELECT id::text FROM outbox ORDER BY created_at, id LIMIT 4 FOR UPDATE`).Scan(&held).Error).To(Succeed())
		Expect(held).To(HaveLen(4))

		relay := outbox.NewRelay(db, bus, log, outbox.RelayConfig{})
		flushed := make(chan int, 1)
		go func() {
			defer GinkgoRecover()
			n, err := relay.Flush(ctx)
			Expect(err).NotTo(HaveOccurred())
			flushed <- n
		}()
		Eventually(flushed).WithTimeout(5 * time.Second).Should(Receive(Equal(2)))
		Expect(unsent()).To(BeEquivalentTo(4))

		Expect(other.Rollback().Error).To(Succeed())
		Expect(relay.Flush(ctx)).To(Equal(4))
		Expect(streamMessages(bus, stream)()).To(BeEquivalentTo(6))
	})

	It("purges sent events and inbox entries older than the retention, and nothing else", func() {
		for i := range 3 {
			_, err := createProject(ctx, writer, subject, fmt.Sprintf("p%d", i), nil)
			Expect(err).NotTo(HaveOccurred())
		}
		relay := outbox.NewRelay(db, bus, log, outbox.RelayConfig{BatchSize: 2, Retention: time.Hour})
		Expect(relay.Flush(ctx)).To(Equal(2))
		Expect(db.Exec(`UPDATE outbox SET sent_at = now() - interval '2 hours' WHERE id = (
			SELECT id FROM outbox WHERE sent_at IS NOT NULL ORDER BY created_at LIMIT 1)`).Error).To(Succeed())
		Expect(db.Exec(`UPDATE outbox SET created_at = now() - interval '2 hours' WHERE sent_at IS NULL`).Error).To(Succeed())
		for _, id := range []string{"old", "new"} {
			_, err := outbox.Once(ctx, db, "c", id, func(*gorm.DB) error { return nil })
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(db.Exec(`UPDATE inbox SET processed_at = now() - interval '2 hours' WHERE event_id = 'old'`).Error).To(Succeed())

		Expect(relay.Purge(ctx)).To(BeEquivalentTo(2))

		var outboxRows, inboxRows int64
		Expect(db.Table("outbox").Count(&outboxRows).Error).To(Succeed())
		Expect(db.Table("inbox").Count(&inboxRows).Error).To(Succeed())
		Expect(outboxRows).To(BeEquivalentTo(2))
		Expect(unsent()).To(BeEquivalentTo(1))
		Expect(inboxRows).To(BeEquivalentTo(1))
	})
})

var _ = Describe("events written while NATS is down", Ordered, func() {
	It("are all delivered once NATS is back, none lost and none twice", func() {
		ctx := context.Background()
		server := testkit.StartNATSServer()
		own := testkit.BusAt(server.URL(), "outbox_outage")
		stream, subject := newStream(own)
		writer := outbox.NewWriter("content-svc")
		handler := &effectHandler{consumer: unique("d")}
		runRelay(outbox.NewRelay(db, own, log, outbox.RelayConfig{Interval: 10 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}))
		consume(own, natsx.ConsumerSpec{Stream: stream, Durable: handler.consumer, Backoff: []time.Duration{50 * time.Millisecond}}, handler.handle)

		By("delivering while NATS is up")
		for i := range 5 {
			_, err := createProject(ctx, writer, subject, fmt.Sprintf("before%d", i), nil)
			Expect(err).NotTo(HaveOccurred())
		}
		Eventually(effects(handler.consumer, "")).WithTimeout(10 * time.Second).Should(BeEquivalentTo(5))

		By("writing events while NATS is stopped")
		server.Stop()
		var during []string
		for i := range 20 {
			id, err := createProject(ctx, writer, subject, fmt.Sprintf("during%d", i), nil)
			Expect(err).NotTo(HaveOccurred())
			during = append(during, id)
		}
		Consistently(unsent).WithTimeout(500 * time.Millisecond).Should(BeEquivalentTo(20))

		By("starting NATS again")
		server.Start()
		Eventually(unsent).WithTimeout(30 * time.Second).Should(BeZero())
		Eventually(effects(handler.consumer, "")).WithTimeout(30 * time.Second).Should(BeEquivalentTo(25))
		for _, id := range during {
			Expect(effects(handler.consumer, id)()).To(BeEquivalentTo(1))
		}
		Expect(streamMessages(own, stream)()).To(BeEquivalentTo(25))
	})
})

var _ = Describe("the inbox", func() {
	ctx := context.Background()

	It("runs the function once per consumer and event id", func() {
		calls := 0
		fn := func(*gorm.DB) error { calls++; return nil }

		Expect(outbox.Once(ctx, db, "mailer", "e1", fn)).To(BeTrue())
		Expect(outbox.Once(ctx, db, "mailer", "e1", fn)).To(BeFalse())
		Expect(outbox.Once(ctx, db, "indexer", "e1", fn)).To(BeTrue())
		Expect(calls).To(Equal(2))
	})

	It("forgets the event when the function fails, so a redelivery runs it again", func() {
		boom := errors.New("boom")
		ran, err := outbox.Once(ctx, db, "mailer", "e1", func(tx *gorm.DB) error {
			Expect(tx.Exec(`INSERT INTO effects (consumer, event_id) VALUES ('mailer', 'e1')`).Error).To(Succeed())
			return boom
		})
		Expect(err).To(MatchError(boom))
		Expect(ran).To(BeFalse())
		Expect(effects("mailer", "e1")()).To(BeZero())

		Expect(outbox.Once(ctx, db, "mailer", "e1", func(*gorm.DB) error { return nil })).To(BeTrue())
	})

	It("lets one of several concurrent deliveries of an event run", func() {
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			ran int
		)
		for range 8 {
			wg.Go(func() {
				defer GinkgoRecover()
				ok, err := outbox.Once(ctx, db, "mailer", "e1", func(tx *gorm.DB) error {
					return tx.Exec(`INSERT INTO effects (consumer, event_id) VALUES ('mailer', 'e1')`).Error
				})
				Expect(err).NotTo(HaveOccurred())
				if ok {
					mu.Lock()
					ran++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		Expect(ran).To(Equal(1))
		Expect(effects("mailer", "e1")()).To(BeEquivalentTo(1))
	})
})
