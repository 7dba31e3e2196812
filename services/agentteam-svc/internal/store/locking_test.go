package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

// Callers racing for locked rows over a small pool: a transaction that waits for a second
// pooled connection while it holds one stalls them all once every connection is held.
const (
	contenders = 30
	poolSize   = 5
	stallLimit = time.Second
)

// call is one caller's operation, given its index and the small pool to run on.
type call func(ctx context.Context, small *gorm.DB, i int) error

// contend runs the call prepare returns from 30 goroutines at once over a pool of 5 connections
// to the suite's database, and expects every call to succeed within a second.
func contend(prepare func() call) {
	GinkgoHelper()
	small, err := pgdb.Open(context.Background(), pgdb.Config{DSN: dsn, MaxOpenConns: poolSize, MaxIdleConns: poolSize})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = pgdb.Close(small) })
	fn := prepare()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := make(chan struct{})
	took := make([]time.Duration, contenders)
	errs := make([]error, contenders)
	var wg sync.WaitGroup
	for i := range contenders {
		wg.Go(func() {
			defer GinkgoRecover()
			<-start
			began := time.Now()
			errs[i] = fn(ctx, small, i)
			took[i] = time.Since(began)
		})
	}
	close(start)
	wg.Wait()
	Expect(errors.Join(errs...)).NotTo(HaveOccurred())
	Expect(slices.Max(took)).To(BeNumerically("<", stallLimit), "the slowest of %d callers over %d connections", contenders, poolSize)
}

var _ = Describe("locking rows under contention on a small pool", func() {
	DescribeTable("completes every call without stalling", contend,
		Entry("accepting invitations to one organization", func() call {
			owner := uuid.NewString()
			o := org.Organization{ID: uuid.NewString(), Name: "Race", CreatedAt: time.Now().UTC()}
			inviter := orgService(db)
			Expect(store.NewOrgs(db).CreateOrganization(context.Background(), o,
				org.Membership{OrganizationID: o.ID, MemberID: owner, Role: access.Owner, CreatedAt: o.CreatedAt},
				audit.New(o.ID, owner, "organization.created", "Organization", o.ID, o.Name))).To(Succeed())
			tokens := make([]string, contenders)
			for i := range tokens {
				inv, err := inviter.Invite(context.Background(), owner, o.ID, access.Member)
				Expect(err).NotTo(HaveOccurred())
				tokens[i] = inv.JoinToken
			}
			return func(ctx context.Context, small *gorm.DB, i int) error {
				_, err := orgService(small).Accept(ctx, uuid.NewString(), tokens[i])
				return err
			}
		}),
	)
})

// orgService is the organizations' domain over db, checking access through the plain store
// (every lookup a database read, as on a cache miss).
func orgService(db *gorm.DB) *org.Service {
	orgs := store.NewOrgs(db)
	return org.NewService(orgs, access.NewChecker(orgs), uuid.NewString, func() time.Time { return time.Now().UTC() })
}
