package runwatch_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/runwatch"
)

var _ = Describe("the run watch hub", func() {
	It("wakes the watchers of the run and kind a notification names, and no one else", func() {
		h := runwatch.New(time.Hour)
		h.SetLive(true)
		status, stopStatus := h.Watch("run-1", run.StatusEvent)
		DeferCleanup(stopStatus)
		both, stopBoth := h.Watch("run-1", run.StatusEvent, run.StepEvent)
		DeferCleanup(stopBoth)
		other, stopOther := h.Watch("run-2", run.StatusEvent, run.StepEvent)
		DeferCleanup(stopOther)

		h.Notify("run-1:step")
		Expect(both).To(Receive())
		Expect(status).NotTo(Receive())
		Expect(other).NotTo(Receive())

		h.Notify("run-1:status")
		h.Notify("run-1:status")
		Expect(status).To(Receive())
		Expect(status).NotTo(Receive(), "wake-ups coalesce")
		Expect(both).To(Receive())
	})

	It("stops waking a watcher that stopped watching", func() {
		h := runwatch.New(time.Hour)
		ch, stop := h.Watch("run-1", run.StepEvent)
		stop()
		h.Notify("run-1:step")
		Expect(ch).NotTo(Receive())
	})

	It("wakes every watcher each poll while the listener does not listen, and once when it listens again", func() {
		h := runwatch.New(20 * time.Millisecond)
		testkit.RunUntilCleanup(h.Run)
		ch, stop := h.Watch("run-1", run.StatusEvent)
		DeferCleanup(stop)
		Eventually(ch).Should(Receive())
		Eventually(ch).Should(Receive())

		h.SetLive(true)
		Eventually(ch).Should(Receive())
		Consistently(ch, 100*time.Millisecond).ShouldNot(Receive())
	})
})
