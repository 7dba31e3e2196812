package bus_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/bus"
)

// refreshes records every refresh asked of it.
type refreshes struct {
	mu  sync.Mutex
	got []string
}

func (r *refreshes) RefreshTeam(_ context.Context, teamID string, version int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprint(teamID, "@", version))
	return nil
}

func (r *refreshes) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

var _ = Describe("memory change notices", func() {
	It("reach every listening replica, which refreshes the team to the version", func() {
		b := testkit.Bus("agentteam_bus")
		log := slog.New(slog.NewTextHandler(GinkgoWriter, nil))
		notices := bus.NewMemoryNotices(b, log)
		first, second := &refreshes{}, &refreshes{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 2)
		for _, r := range []*refreshes{first, second} {
			go func() { done <- bus.NewMemoryNotices(b, log).Listen(ctx, r) }()
		}
		DeferCleanup(func() {
			cancel()
			Eventually(done).Should(Receive(BeNil()))
			Eventually(done).Should(Receive(BeNil()))
		})

		Eventually(func() []string {
			notices.Changed(ctx, "team-a", 3)
			return second.seen()
		}).Should(ContainElement("team-a@3"))
		Eventually(first.seen).Should(ContainElement("team-a@3"))
	})

	It("ignores a malformed notice", func() {
		b := testkit.Bus("agentteam_bus")
		log := slog.New(slog.NewTextHandler(GinkgoWriter, nil))
		r := &refreshes{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- bus.NewMemoryNotices(b, log).Listen(ctx, r) }()
		DeferCleanup(func() {
			cancel()
			Eventually(done).Should(Receive(BeNil()))
		})
		Eventually(func() []string {
			Expect(b.Conn().Publish(b.Subject(bus.SubjectMemoryChanged), []byte("{not json"))).To(Succeed())
			bus.NewMemoryNotices(b, log).Changed(ctx, "team-b", 1)
			return r.seen()
		}).Should(ContainElement("team-b@1"))
		Expect(r.seen()).To(HaveEach(Equal("team-b@1")), "the malformed notice refreshed nothing")
	})
})
