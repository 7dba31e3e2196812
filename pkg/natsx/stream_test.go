package natsx_test

import (
	"context"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/motionstudio/platform/pkg/natsx"
)

var _ = Describe("ensuring a platform stream", func() {
	limits := natsx.StreamConfig{
		Replicas: 1, EventsMaxAge: 48 * time.Hour, EventsMaxBytes: 64 << 20,
		JobsMaxAge: 24 * time.Hour, JobsMaxBytes: 16 << 20,
	}
	info := func(name string) jetstream.StreamConfig {
		s, err := bus.JetStream().Stream(context.Background(), bus.StreamName(name))
		Expect(err).NotTo(HaveOccurred())
		return s.CachedInfo().Config
	}

	It("keeps events by age and size", func() {
		name := unique("EV")
		Expect(bus.EnsureStream(context.Background(),
			limits.Spec(name, []string{strings.ToLower(name) + ".>"}, false))).To(Succeed())
		cfg := info(name)
		Expect(cfg.Retention).To(Equal(jetstream.LimitsPolicy))
		Expect(cfg.MaxAge).To(Equal(48 * time.Hour))
		Expect(cfg.MaxBytes).To(Equal(int64(64 << 20)))
		Expect(cfg.Replicas).To(Equal(1))
	})

	It("makes job streams work queues that drop a message once a worker acknowledged it", func() {
		name := unique("JOB")
		subject := strings.ToLower(name) + ".run"
		Expect(bus.EnsureStream(context.Background(),
			limits.Spec(name, []string{strings.ToLower(name) + ".>"}, true))).To(Succeed())
		cfg := info(name)
		Expect(cfg.Retention).To(Equal(jetstream.WorkQueuePolicy))
		Expect(cfg.MaxAge).To(Equal(24 * time.Hour))
		Expect(cfg.MaxBytes).To(Equal(int64(16 << 20)))

		ev, err := natsx.NewEvent("test-svc", "test.job.v1", subject, &structpb.Struct{})
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(context.Background(), ev)).To(Succeed())
		consume(natsx.ConsumerSpec{Stream: name, Durable: unique("worker"), FilterSubjects: []string{subject}},
			func(context.Context, natsx.Message) error { return nil })
		Eventually(func() uint64 {
			s, err := bus.JetStream().Stream(context.Background(), bus.StreamName(name))
			Expect(err).NotTo(HaveOccurred())
			i, err := s.Info(context.Background())
			Expect(err).NotTo(HaveOccurred())
			return i.State.Msgs
		}).WithTimeout(10 * time.Second).Should(BeZero())
	})

	It("updates an existing unlimited stream in place at the next start", func() {
		name := unique("OLD")
		subjects := []string{strings.ToLower(name) + ".>"}
		Expect(bus.EnsureStream(context.Background(), natsx.StreamSpec{Name: name, Subjects: subjects})).To(Succeed())
		Expect(info(name).MaxAge).To(BeZero())

		Expect(bus.EnsureStream(context.Background(), limits.Spec(name, subjects, false))).To(Succeed())
		cfg := info(name)
		Expect(cfg.MaxAge).To(Equal(48 * time.Hour))
		Expect(cfg.MaxBytes).To(Equal(int64(64 << 20)))
	})

	It("keeps the retention JetStream cannot change and still applies the new limits", func() {
		name := unique("LEGACYJOBS")
		subjects := []string{strings.ToLower(name) + ".>"}
		Expect(bus.EnsureStream(context.Background(), natsx.StreamSpec{Name: name, Subjects: subjects})).To(Succeed())

		Expect(bus.EnsureStream(context.Background(), limits.Spec(name, subjects, true))).To(Succeed())
		cfg := info(name)
		Expect(cfg.Retention).To(Equal(jetstream.LimitsPolicy))
		Expect(cfg.MaxAge).To(Equal(24 * time.Hour))
	})

	It("leaves an existing stream's limits alone for a spec that states none", func() {
		name := unique("SHARED")
		subjects := []string{strings.ToLower(name) + ".>"}
		Expect(bus.EnsureStream(context.Background(), limits.Spec(name, subjects, true))).To(Succeed())
		Expect(bus.EnsureStream(context.Background(), natsx.StreamSpec{Name: name, Subjects: subjects})).To(Succeed())
		cfg := info(name)
		Expect(cfg.Retention).To(Equal(jetstream.WorkQueuePolicy))
		Expect(cfg.MaxAge).To(Equal(24 * time.Hour))
		Expect(cfg.MaxBytes).To(Equal(int64(16 << 20)))
	})

	It("takes its limits from the bus configuration", func() {
		spec := bus.StreamSpec("X", []string{"x.>"}, true)
		Expect(spec.Retention).To(Equal(natsx.RetainWorkQueue))
	})
})
