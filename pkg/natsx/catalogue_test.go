package natsx_test

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	events "github.com/motionstudio/platform/proto-events"
)

var _ = Describe("ensuring the catalogue's streams", func() {
	It("creates the named streams with the catalogue's subjects and kind", func() {
		Expect(bus.EnsureStreams(context.Background(), events.StreamContentEvents, events.StreamJobs)).To(Succeed())
		for name, want := range map[string]jetstream.RetentionPolicy{
			events.StreamContentEvents: jetstream.LimitsPolicy,
			events.StreamJobs:          jetstream.WorkQueuePolicy,
		} {
			s, err := bus.JetStream().Stream(context.Background(), bus.StreamName(name))
			Expect(err).NotTo(HaveOccurred())
			Expect(s.CachedInfo().Config.Retention).To(Equal(want), name)
		}
		s, err := bus.JetStream().Stream(context.Background(), bus.StreamName(events.StreamContentEvents))
		Expect(err).NotTo(HaveOccurred())
		Expect(s.CachedInfo().Config.Subjects).To(ConsistOf(bus.Subject("content.>")))
	})

	It("refuses a stream the catalogue does not list", func() {
		Expect(bus.EnsureStreams(context.Background(), "NOPE")).To(MatchError(ContainSubstring("NOPE is not in the event catalogue")))
	})
})
