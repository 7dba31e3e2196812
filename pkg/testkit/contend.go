package testkit

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
)

// Contention: callers racing for locked rows over a small pool. A transaction that waits for a
// second pooled connection while it holds one stalls them all once every connection is held.
const (
	// Contenders is how many callers Contend runs at once.
	Contenders = 30
	// ContendedPool is how many connections they share.
	ContendedPool = 5
	// StallLimit is how long the slowest call may take.
	StallLimit = time.Second
)

// ContendedCall is one caller's operation, given its index (0 to Contenders-1) and the small
// pool to run it on.
type ContendedCall func(ctx context.Context, small *gorm.DB, i int) error

// Contend runs the call prepare returns from Contenders goroutines at once over a pool of
// ContendedPool connections to the database at dsn, and expects every call to succeed within
// StallLimit. Mark the specs Serial: callers of two specs at once would share the machine's
// cores and disk and measure each other. The pool is not guarded (pgdb.Config.GuardTransactions), so that a mistake shows
// as the stall production would see. The slowest call is added to the spec's report.
func Contend(dsn string, prepare func() ContendedCall) {
	ginkgo.GinkgoHelper()
	small, err := pgdb.Open(context.Background(), pgdb.Config{DSN: dsn, MaxOpenConns: ContendedPool, MaxIdleConns: ContendedPool})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func() { _ = pgdb.Close(small) })
	call := prepare()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := make(chan struct{})
	took := make([]time.Duration, Contenders)
	errs := make([]error, Contenders)
	var wg sync.WaitGroup
	for i := range Contenders {
		wg.Go(func() {
			defer ginkgo.GinkgoRecover()
			<-start
			began := time.Now()
			errs[i] = call(ctx, small, i)
			took[i] = time.Since(began)
		})
	}
	close(start)
	wg.Wait()
	gomega.Expect(errors.Join(errs...)).NotTo(gomega.HaveOccurred())
	slowest := slices.Max(took)
	ginkgo.AddReportEntry("slowest call", slowest.String())
	gomega.Expect(slowest).To(gomega.BeNumerically("<", StallLimit), "the slowest of %d callers over %d connections", Contenders, ContendedPool)
}
