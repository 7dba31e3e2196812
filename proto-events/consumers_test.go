package events_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	events "github.com/motionstudio/platform/proto-events"
)

var _ = Describe("the consumer catalogue", func() {
	It("lists every durable under its constant, once", func() {
		for _, name := range []string{events.DurableWebhookFanout, events.DurableWebhookDelivery,
			events.DurableQuestProgress, events.DurableSvgPreviewWorker, events.DurableAgentRunWorker} {
			c, ok := events.Durable(name)
			Expect(ok).To(BeTrue(), name)
			Expect(c.Name).To(Equal(name))
		}
		seen := map[string]bool{}
		for _, c := range events.Consumers() {
			key := c.Service + "/" + c.Name
			Expect(seen).NotTo(HaveKey(key))
			seen[key] = true
		}
		_, ok := events.Durable(events.ReaderSessionRevocations)
		Expect(ok).To(BeFalse(), "a reader in every process is not a durable")
	})

	It("has every consumer act on catalogue subjects its filter lets through, in its stream", func() {
		for _, c := range events.Consumers() {
			Expect(events.Services()).To(ContainElement(c.Service), c.Name)
			Expect(c.Subjects).NotTo(BeEmpty(), c.Name)
			Expect(c.Summary).NotTo(BeEmpty(), c.Name)
			for _, s := range c.Subjects {
				_, ok := events.Lookup(s)
				Expect(ok).To(BeTrue(), "%s acts on unknown subject %s", c.Name, s)
				Expect(matches(c.Filter, s)).To(BeTrue(), "%s's filter %s misses %s", c.Name, c.Filter, s)
			}
			if c.Stream == "" {
				Expect(c.Delivery).To(Equal(events.DeliveryEveryProcess), "%s reads no stream, so it cannot be durable", c.Name)
				continue
			}
			i := -1
			for j, st := range events.Streams() {
				if st.Name == c.Stream {
					i = j
				}
			}
			Expect(i).NotTo(Equal(-1), "%s reads unknown stream %s", c.Name, c.Stream)
			Expect(events.Streams()[i].Subjects).To(ContainElement(Satisfy(func(f string) bool { return overlap(f, c.Filter) })))
		}
	})

	It("gives every job subject exactly one durable worker of its producer", func() {
		for _, e := range events.Catalogue() {
			if e.Kind != events.KindJob {
				continue
			}
			var workers []events.Consumer
			for _, c := range events.Consumers() {
				if c.Handles(e.Subject) {
					workers = append(workers, c)
				}
			}
			Expect(workers).To(HaveLen(1), e.Subject)
			Expect(workers[0].Delivery).To(Equal(events.DeliveryDurable))
			Expect(workers[0].Service).To(Equal(e.Producer()))
		}
	})

	It("delivers every webhook event to the fan-out and the quest triggers to quest progress", func() {
		fanout, _ := events.Durable(events.DurableWebhookFanout)
		for _, subject := range events.WebhookEvents() {
			Expect(fanout.Handles(subject)).To(BeTrue(), subject)
		}
		Expect(fanout.Handles(events.SubjectSessionRevoked)).To(BeFalse())
		quests, _ := events.Durable(events.DurableQuestProgress)
		Expect(quests.Handles(events.SubjectPlanActivated)).To(BeTrue())
		Expect(quests.Handles(events.SubjectUserBanned)).To(BeFalse())
	})
})
