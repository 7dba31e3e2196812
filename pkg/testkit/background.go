package testkit

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// RunUntilCleanup runs run (a server, a relay, a listener, a worker) in the background until
// the spec ends, then cancels its context and fails the spec unless it returns nil within
// 10 seconds.
func RunUntilCleanup(run func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	ginkgo.DeferCleanup(func() {
		cancel()
		gomega.Eventually(done).WithTimeout(10 * time.Second).Should(gomega.Receive(gomega.BeNil()))
	})
}
