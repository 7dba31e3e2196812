package natsx_test

import (
	"context"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/natsx"
	events "github.com/motionstudio/platform/proto-events"
	contentv1 "github.com/motionstudio/platform/proto-events/gen/content/v1"
)

var _ = Describe("job wake-ups", func() {
	It("hands each job's id to the processor once and dead-letters a wake-up that names no job", func(ctx SpecContext) {
		Expect(bus.EnsureStreams(ctx, events.StreamJobs)).To(Succeed())
		seen := make(chan string, 4)
		runCtx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			c := natsx.JobConsumer{Durable: events.DurableSvgPreviewWorker, Queue: "svg_preview.generate", Concurrency: 2}
			done <- natsx.ConsumeJobs(runCtx, bus, c, (*contentv1.SvgPreviewJob).GetPreviewId, func(_ context.Context, id string) error {
				seen <- id
				return nil
			})
		}()
		DeferCleanup(func() {
			cancel()
			Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
		})

		publish := func(previewID string) {
			ev, err := natsx.NewEvent(events.SourceContent, events.SubjectSvgPreviewJob, events.SubjectSvgPreviewJob, &contentv1.SvgPreviewJob{PreviewId: previewID})
			Expect(err).NotTo(HaveOccurred())
			Expect(bus.Publish(ctx, ev)).To(Succeed())
		}
		id := uuid.NewString()
		publish("not-a-preview")
		publish(id)

		Eventually(seen).WithTimeout(10 * time.Second).Should(Receive(Equal(id)))
		Eventually(deadLetters(events.DurableSvgPreviewWorker)).WithTimeout(10 * time.Second).Should(HaveLen(1))
		Consistently(seen).WithTimeout(500 * time.Millisecond).ShouldNot(Receive())
	})

	It("refuses a durable the consumer catalogue does not list", func(ctx SpecContext) {
		err := natsx.ConsumeJobs(ctx, bus, natsx.JobConsumer{Durable: "nobody_worker", Queue: "x"}, (*contentv1.SvgPreviewJob).GetPreviewId,
			func(context.Context, string) error { return nil })
		Expect(err).To(MatchError(ContainSubstring("nobody_worker is not in the consumer catalogue")))
	})
})
