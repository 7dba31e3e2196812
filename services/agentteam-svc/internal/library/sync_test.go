package library_test

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
)

// slowSource counts its snapshots and holds each one until release is closed.
type slowSource struct {
	reads   atomic.Int64
	release chan struct{}
}

func (s *slowSource) Snapshot(ctx context.Context) (library.Snapshot, error) {
	s.reads.Add(1)
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return library.Snapshot{}, errors.New("unreachable source")
}

var _ = Describe("a burst of push hooks", func() {
	It("leads to one sync running and at most one more queued", func(ctx SpecContext) {
		src := &slowSource{release: make(chan struct{})}
		var reports atomic.Int64
		y := library.NewSyncer(library.NewService(library.Deps{Source: src}), time.Millisecond, func(library.SyncResult, error) { reports.Add(1) })
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- y.Run(runCtx) }()
		DeferCleanup(func() { cancel(); Eventually(done).Should(Receive()) })

		y.Trigger()
		Eventually(src.reads.Load).Should(Equal(int64(1)), "the first hook starts a sync")
		for range 24 {
			y.Trigger()
		}
		close(src.release)
		Eventually(reports.Load).Should(Equal(int64(2)), "the hooks that came during the sync make one more")
		Consistently(src.reads.Load, 200*time.Millisecond).Should(Equal(int64(2)))
	})
})
