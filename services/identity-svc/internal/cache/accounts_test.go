package cache_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
	"github.com/motionstudio/platform/services/identity-svc/internal/cache"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
)

// notified bounds how long a committed change takes to reach the listener.
const notified = 2 * time.Second

// reads counts the database reads of UserWithTenant; during, when set, runs inside each read
// after the database answered, as a change arriving mid-read would.
type reads struct {
	*store.Users
	n      atomic.Int32
	during func()
}

func (r *reads) UserWithTenant(ctx context.Context, tenantID, userID string) (*auth.User, *auth.Tenant, error) {
	r.n.Add(1)
	u, t, err := r.Users.UserWithTenant(ctx, tenantID, userID)
	if r.during != nil {
		r.during()
	}
	return u, t, err
}

type fixture struct {
	held  *cache.Accounts
	users auth.Users
	src   *reads
	// own writes as this process does: telling held.
	ownUsers   *store.Users
	ownTenants *store.Tenants
}

func newFixture(maxUsers int) *fixture {
	held := cache.NewAccounts(maxUsers)
	w := outbox.NewWriter(events.SourceIdentity)
	src := &reads{Users: store.NewUsers(db, w, nil)}
	return &fixture{held: held, users: held.Users(src), src: src,
		ownUsers: store.NewUsers(db, w, held), ownTenants: store.NewTenants(db, w, held)}
}

// listen runs a listener over f.held until the spec ends and waits until it listens.
func (f *fixture) listen(tenantID, userID string) {
	GinkgoHelper()
	l, err := cache.NewListener(f.held, dsn, slog.New(slog.NewTextHandler(GinkgoWriter, nil)), prometheus.NewRegistry())
	Expect(err).NotTo(HaveOccurred())
	testkit.RunUntilCleanup(l.Run)
	// A user read twice with at most one database read tells it listens.
	Eventually(func() int32 {
		before := f.src.n.Load()
		f.read(tenantID, userID)
		f.read(tenantID, userID)
		return f.src.n.Load() - before
	}).WithTimeout(5 * time.Second).Should(BeNumerically("<=", 1))
	f.src.n.Store(0)
}

func (f *fixture) read(tenantID, userID string) (*auth.User, *auth.Tenant) {
	GinkgoHelper()
	u, t, err := f.users.UserWithTenant(context.Background(), tenantID, userID)
	Expect(err).NotTo(HaveOccurred())
	return u, t
}

// account inserts a tenant and n of its users, answering their ids.
func newAccount(n int) (string, []string) {
	GinkgoHelper()
	tenantID := uuid.NewString()
	Expect(db.Exec(`INSERT INTO tenants (id, slug, name, kind, status, contact_email) VALUES (?, ?, 'Cache', 'Reseller', 'Active', 'ops@cache.test')`,
		tenantID, "cache-"+tenantID[:8]).Error).To(Succeed())
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uuid.NewString()
		Expect(db.Exec(`INSERT INTO users (id, tenant_id, email, full_name, register_mode, password_hash) VALUES (?, ?, ?, 'First', 'email', 'x')`,
			ids[i], tenantID, ids[i]+"@cache.test").Error).To(Succeed())
	}
	return tenantID, ids
}

func named(name string) func(*account.User) error {
	return func(u *account.User) error {
		u.FullName = &name
		return nil
	}
}

// accountPair writes users and tenants, reads them as refreshes do, and says how long a write
// may take to be read.
type accountPair struct {
	users   *store.Users
	tenants *store.Tenants
	reader  auth.Users
	within  time.Duration
}

// listening is a fixture whose listener listens (told by a throwaway account read from memory).
func listening() *fixture {
	GinkgoHelper()
	f := newFixture(100)
	tenantID, ids := newAccount(1)
	f.listen(tenantID, ids[0])
	return f
}

// The contract of auth.Users' UserWithTenant, run against the plain store and the cached one: a
// user and its tenant read after a change show it (in another process, once notified).
var _ = DescribeTable("users and their tenants read after writes",
	func(setup func() accountPair) {
		ctx := context.Background()
		p := setup()
		tenantID, ids := newAccount(1)
		read := func() (*auth.User, *auth.Tenant) {
			u, t, err := p.reader.UserWithTenant(ctx, tenantID, ids[0])
			Expect(err).NotTo(HaveOccurred())
			return u, t
		}
		eventually := func(actual func() string, want string) {
			GinkgoHelper()
			if p.within == 0 {
				Expect(actual()).To(Equal(want))
				return
			}
			Eventually(actual).WithTimeout(p.within).Should(Equal(want))
		}
		u, t := read()
		Expect(*u.FullName).To(Equal("First"))
		Expect(t.Status).To(Equal(tenant.StatusActive))

		_, err := p.users.Update(ctx, ids[0], named("Second"))
		Expect(err).NotTo(HaveOccurred())
		eventually(func() string { u, _ := read(); return *u.FullName }, "Second")

		_, err = p.tenants.Update(ctx, tenantID, func(t *tenant.Tenant) (tenant.Change, error) {
			t.Status = "Suspended"
			return tenant.Change{Fields: []string{"status"}, At: time.Now()}, nil
		})
		Expect(err).NotTo(HaveOccurred())
		eventually(func() string { _, t := read(); return t.Status }, "Suspended")
	},
	Entry("the plain store", func() accountPair {
		w := outbox.NewWriter(events.SourceIdentity)
		users := store.NewUsers(db, w, nil)
		return accountPair{users: users, tenants: store.NewTenants(db, w, nil), reader: users}
	}),
	Entry("the cached store, by its own process", func() accountPair {
		f := listening()
		return accountPair{users: f.ownUsers, tenants: f.ownTenants, reader: f.users}
	}),
	Entry("the cached store, across two processes", func() accountPair {
		a, b := listening(), listening()
		return accountPair{users: a.ownUsers, tenants: a.ownTenants, reader: b.users, within: notified}
	}),
)

var _ = Describe("the accounts refreshes read", func() {
	It("answers a user from memory once read, and this process's writes at once", func() {
		f := newFixture(100)
		tenantID, ids := newAccount(1)
		// Live with no listener: no notification reaches it, so only the stores' telling can.
		f.held.SetLive(true)

		u, t := f.read(tenantID, ids[0])
		Expect(*u.FullName).To(Equal("First"))
		Expect(t.ID).To(Equal(tenantID))
		f.read(tenantID, ids[0])
		Expect(f.src.n.Load()).To(BeEquivalentTo(1))

		_, err := f.ownUsers.Update(context.Background(), ids[0], named("Second"))
		Expect(err).NotTo(HaveOccurred())
		u, _ = f.read(tenantID, ids[0])
		Expect(*u.FullName).To(Equal("Second"), "no wait for the notification")

		_, err = f.ownTenants.Update(context.Background(), tenantID, func(t *tenant.Tenant) (tenant.Change, error) {
			t.Status = "Suspended"
			return tenant.Change{Fields: []string{"status"}, At: time.Now()}, nil
		})
		Expect(err).NotTo(HaveOccurred())
		_, t = f.read(tenantID, ids[0])
		Expect(t.Status).To(Equal("Suspended"))
		Expect(t.Open()).To(BeFalse())
	})

	It("hands out copies: a caller changing its answer changes nothing held", func() {
		f := newFixture(100)
		tenantID, ids := newAccount(1)
		f.listen(tenantID, ids[0])
		u, t := f.read(tenantID, ids[0])
		u.IsAdmin, t.Status = true, "Cancelled"
		u, t = f.read(tenantID, ids[0])
		Expect(u.IsAdmin).To(BeFalse())
		Expect(t.Status).To(Equal(tenant.StatusActive))
	})

	It("drops what another process changed once the database notifies it", func() {
		f := newFixture(100)
		tenantID, ids := newAccount(2)
		f.listen(tenantID, ids[0])
		f.read(tenantID, ids[1])

		Expect(db.Exec(`UPDATE users SET banned_at = now() WHERE id = ?`, ids[0]).Error).To(Succeed())
		Eventually(func() bool {
			u, _ := f.read(tenantID, ids[0])
			return u.BannedAt != nil
		}).WithTimeout(notified).Should(BeTrue())

		Expect(db.Exec(`UPDATE tenants SET status = 'Cancelled' WHERE id = ?`, tenantID).Error).To(Succeed())
		Eventually(func() string {
			_, t := f.read(tenantID, ids[1])
			return t.Status
		}).WithTimeout(notified).Should(Equal("Cancelled"))

		Expect(db.Exec(`DELETE FROM users WHERE id = ?`, ids[1]).Error).To(Succeed())
		Eventually(func() error {
			_, _, err := f.users.UserWithTenant(context.Background(), tenantID, ids[1])
			return err
		}).WithTimeout(notified).Should(HaveOccurred())
	})

	It("keeps nothing before it listens or after it stopped", func() {
		f := newFixture(100)
		tenantID, ids := newAccount(1)
		f.read(tenantID, ids[0])
		f.read(tenantID, ids[0])
		Expect(f.src.n.Load()).To(BeEquivalentTo(2))

		f.listen(tenantID, ids[0])
		f.read(tenantID, ids[0])
		Expect(f.src.n.Load()).To(BeZero())
		f.held.SetLive(false)
		f.read(tenantID, ids[0])
		f.read(tenantID, ids[0])
		Expect(f.src.n.Load()).To(BeEquivalentTo(2))
	})

	It("does not keep a read that a change overtook", func() {
		f := newFixture(100)
		tenantID, ids := newAccount(2)
		f.listen(tenantID, ids[1])
		f.src.during = func() { f.held.UserChanged(ids[1]) }
		f.read(tenantID, ids[0])
		f.src.during = nil
		f.read(tenantID, ids[0])
		Expect(f.src.n.Load()).To(BeEquivalentTo(2), "the first read was not kept")
		f.read(tenantID, ids[0])
		Expect(f.src.n.Load()).To(BeEquivalentTo(2))
	})

	It("answers a user only for its own tenant", func() {
		f := newFixture(100)
		tenantID, ids := newAccount(1)
		f.listen(tenantID, ids[0])
		_, _, err := f.users.UserWithTenant(context.Background(), uuid.NewString(), ids[0])
		Expect(err).To(HaveOccurred())
	})

	It("keeps at most its bound", func() {
		f := newFixture(3)
		tenantID, ids := newAccount(10)
		f.listen(tenantID, ids[0])
		for _, id := range ids {
			f.read(tenantID, id)
		}
		Expect(f.held.Len()).To(Equal(3))
		Expect(cache.NewAccounts(0).Len()).To(BeZero())
	})
})
