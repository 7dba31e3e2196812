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
	agentteamv1 "github.com/motionstudio/platform/proto-events/gen/agentteam/v1"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/cache"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

// notified bounds how long a committed change takes to reach the listener.
const notified = 2 * time.Second

// maxEntries bounds each map of the facts in these specs.
const maxEntries = 1000

// source counts the database reads of the directory; during, when set, runs inside each read
// after the database answered, as a change arriving mid-read would.
type source struct {
	*store.Orgs
	calls  atomic.Int32
	during func()
}

func (s *source) RoleOf(ctx context.Context, organizationID, memberID string) (access.Role, bool, error) {
	s.calls.Add(1)
	r, ok, err := s.Orgs.RoleOf(ctx, organizationID, memberID)
	if s.during != nil {
		s.during()
	}
	return r, ok, err
}

func (s *source) TeamMember(ctx context.Context, teamID, memberID string) (access.TeamMember, error) {
	s.calls.Add(1)
	t, err := s.Orgs.TeamMember(ctx, teamID, memberID)
	if s.during != nil {
		s.during()
	}
	return t, err
}

// fixture is an organization with its owner and a team, written through the stores.
type fixture struct{ org, owner, team string }

func newFixture() fixture {
	GinkgoHelper()
	ctx := context.Background()
	fx := fixture{org: uuid.NewString(), owner: uuid.NewString(), team: uuid.NewString()}
	now := time.Now().UTC()
	o := org.Organization{ID: fx.org, Name: "Cache", CreatedAt: now}
	owner := org.Membership{OrganizationID: fx.org, MemberID: fx.owner, Role: access.Owner, CreatedAt: now}
	Expect(store.NewOrgs(db).CreateOrganization(ctx, o, owner, audit.New(fx.org, fx.owner, "organization.created", "Organization", fx.org, o.Name))).To(Succeed())
	t := board.Team{ID: fx.team, OrganizationID: fx.org, Name: "Cache", CreatedAt: now}
	Expect(store.NewStructure(db).CreateTeam(ctx, t, audit.New(fx.org, fx.owner, "team.created", "Team", fx.team, t.Name))).To(Succeed())
	return fx
}

// newTask writes a task on the team through s.
func (fx fixture) newTask(s board.Store) {
	GinkgoHelper()
	now := time.Now().UTC()
	w := board.WorkItem{ID: uuid.NewString(), TeamID: fx.team, Title: "T", Type: board.TypeTask, Status: board.StatusBacklog, CreatedAt: now, UpdatedAt: now}
	Expect(s.CreateTask(context.Background(), w, audit.New(fx.org, fx.owner, "task.created", "WorkItem", w.ID, w.Title))).To(Succeed())
}

func (fx fixture) setRole(role access.Role) {
	GinkgoHelper()
	Expect(db.Exec(`UPDATE memberships SET role = ? WHERE organization_id = ? AND member_id = ?`, string(role), fx.org, fx.owner).Error).To(Succeed())
}

// listen runs a listener over f until the spec ends and waits until it listens.
func listen(f *cache.Facts) {
	GinkgoHelper()
	listenTo(f, dsn)
}

// listenTo runs a listener over f to the database at url until the spec ends and waits until
// it listens.
func listenTo(f *cache.Facts, url string) {
	GinkgoHelper()
	listenWith(f, url, nil)
}

// listenWith is listenTo with a committed callback.
func listenWith(f *cache.Facts, url string, committed func()) {
	GinkgoHelper()
	l, err := cache.NewListener(f, url, committed, nil, slog.New(slog.NewTextHandler(GinkgoWriter, nil)), prometheus.NewRegistry())
	Expect(err).NotTo(HaveOccurred())
	testkit.RunUntilCleanup(l.Run)
	Eventually(f.Live).WithTimeout(5 * time.Second).Should(BeTrue())
}

// terminateListeners ends the listening connections to the suite's database, as a restart of
// Postgres would.
func terminateListeners() {
	GinkgoHelper()
	Expect(db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = ?`, cache.ApplicationName).Error).To(Succeed())
}

var _ = Describe("the directory kept in memory", func() {
	var (
		fx  fixture
		src *source
		f   *cache.Facts
		dir *cache.Directory
		ctx = context.Background()
	)
	BeforeEach(func() {
		fx = newFixture()
		src = &source{Orgs: store.NewOrgs(db)}
		f = cache.New(maxEntries, maxEntries)
		dir = cache.NewDirectory(f, src)
	})
	role := func() access.Role {
		GinkgoHelper()
		r, ok, err := dir.RoleOf(ctx, fx.org, fx.owner)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		return r
	}
	version := func() int64 {
		GinkgoHelper()
		v, r, ok, err := dir.BoardVersion(ctx, fx.team, fx.owner)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(r).To(Equal(access.Owner))
		return v
	}

	It("reads the database for every lookup until the listener listens", func() {
		Expect(role()).To(Equal(access.Owner))
		Expect(role()).To(Equal(access.Owner))
		Expect(src.calls.Load()).To(BeEquivalentTo(2))
	})

	It("answers a role from memory while listening, until its change is notified", func() {
		listen(f)
		Expect(role()).To(Equal(access.Owner))
		Expect(role()).To(Equal(access.Owner))
		Expect(src.calls.Load()).To(BeEquivalentTo(1))
		fx.setRole(access.Member)
		Eventually(role).WithTimeout(notified).Should(Equal(access.Member))
	})

	It("answers a board version and the reader's role from one read, until the board changes", func() {
		listen(f)
		v := version()
		org, r, ok, err := dir.TeamRole(ctx, fx.team, fx.owner)
		Expect(err).NotTo(HaveOccurred())
		Expect([]any{org, r, ok}).To(Equal([]any{fx.org, access.Owner, true}))
		Expect(src.calls.Load()).To(BeEquivalentTo(1))
		fx.newTask(store.NewBoard(db, outbox.NewWriter(events.SourceAgentteam)))
		Eventually(version).WithTimeout(notified).Should(BeNumerically(">", v))
	})

	It("answers an unknown team from the database, never from memory", func() {
		listen(f)
		for range 2 {
			_, _, _, err := dir.BoardVersion(ctx, uuid.NewString(), fx.owner)
			Expect(err).To(MatchError(access.TeamNotFound()))
		}
		Expect(src.calls.Load()).To(BeEquivalentTo(2))
	})

	It("never keeps a missing role, so a new member is seen at once", func() {
		listen(f)
		stranger := uuid.NewString()
		for range 2 {
			_, ok, err := dir.RoleOf(ctx, fx.org, stranger)
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeFalse())
		}
		Expect(src.calls.Load()).To(BeEquivalentTo(2))
	})

	It("keeps no value read while a change arrived", func() {
		f.SetLive(true)
		src.during = func() { f.Apply("m:" + fx.org + ":" + fx.owner) }
		Expect(role()).To(Equal(access.Owner))
		src.during = func() { f.Apply("t:" + fx.team) }
		version()
		src.during = nil
		Expect(src.calls.Load()).To(BeEquivalentTo(2))
		role()
		version()
		Expect(src.calls.Load()).To(BeEquivalentTo(3),
			"the board version was not kept; the role read with it was, as no role changed during that read")
		role()
		version()
		Expect(src.calls.Load()).To(BeEquivalentTo(3), "both were kept")
	})

	It("drops everything when a table is truncated", func() {
		listen(f)
		version()
		Expect(db.Exec(`TRUNCATE work_items CASCADE`).Error).To(Succeed())
		Eventually(func() int32 { version(); return src.calls.Load() }).WithTimeout(notified).Should(BeEquivalentTo(2))
	})

	It("reads the database while the listener cannot reach it, and caches again once it listens", func() {
		p, through := newProxy()
		listenTo(f, through)
		Expect(role()).To(Equal(access.Owner))
		p.cut()
		Eventually(f.Live).WithTimeout(notified).Should(BeFalse())
		fx.setRole(access.TeamOwner)
		calls := src.calls.Load()
		Expect(role()).To(Equal(access.TeamOwner))
		Expect(role()).To(Equal(access.TeamOwner))
		Expect(src.calls.Load()).To(Equal(calls+2), "each lookup read the database")
		Consistently(f.Live).WithTimeout(300 * time.Millisecond).Should(BeFalse())

		p.restore()
		Eventually(f.Live).WithTimeout(10 * time.Second).Should(BeTrue())
		role()
		calls = src.calls.Load()
		Expect(role()).To(Equal(access.TeamOwner))
		Expect(src.calls.Load()).To(Equal(calls))
		fx.setRole(access.Member)
		Eventually(role).WithTimeout(notified).Should(Equal(access.Member))
	})

	It("serves nothing stale after Postgres ends the listener's connection, and caches again once it listens", func() {
		listen(f)
		Expect(role()).To(Equal(access.Owner))
		terminateListeners()
		fx.setRole(access.TeamOwner)
		Eventually(role).WithTimeout(notified).Should(Equal(access.TeamOwner))
		Eventually(f.Live).WithTimeout(5 * time.Second).Should(BeTrue())
		role()
		calls := src.calls.Load()
		Expect(role()).To(Equal(access.TeamOwner))
		Expect(src.calls.Load()).To(Equal(calls))
		fx.setRole(access.Member)
		Eventually(role).WithTimeout(notified).Should(Equal(access.Member))
	})
})

var _ = Describe("writes of the process itself", func() {
	var (
		fx  fixture
		f   *cache.Facts
		ctx = context.Background()
	)
	BeforeEach(func() {
		fx = newFixture()
		// Live without a listener: nothing is notified, so only the write itself can drop
		// what it changed.
		f = cache.New(maxEntries, maxEntries)
		f.SetLive(true)
	})

	It("drop their team's board version, so the next read sees them", func() {
		dir := cache.NewDirectory(f, store.NewOrgs(db))
		before, _, _, err := dir.BoardVersion(ctx, fx.team, fx.owner)
		Expect(err).NotTo(HaveOccurred())
		fx.newTask(cache.NewBoard(f, store.NewBoard(db, outbox.NewWriter(events.SourceAgentteam))))
		after, _, _, err := dir.BoardVersion(ctx, fx.team, fx.owner)
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(BeNumerically(">", before))
	})
})

var _ = Describe("the listener", func() {
	It("tells of outbox rows once their transaction commits, not before", func() {
		var heard atomic.Int32
		listenWith(cache.New(maxEntries, maxEntries), dsn, func() { heard.Add(1) })
		tx := db.Begin()
		DeferCleanup(func() { tx.Rollback() })
		job := &agentteamv1.AgentRunJob{RunId: uuid.NewString(), OrganizationId: uuid.NewString()}
		_, err := outbox.NewWriter(events.SourceAgentteam).Add(context.Background(), tx, events.SubjectAgentRunJob, events.SubjectAgentRunJob, job)
		Expect(err).NotTo(HaveOccurred())
		Consistently(heard.Load).WithTimeout(300 * time.Millisecond).Should(BeZero())
		Expect(tx.Commit().Error).To(Succeed())
		Eventually(heard.Load).WithTimeout(notified).Should(BeEquivalentTo(1))
	})
})

var _ = Describe("facts told to keep none", func() {
	It("read the database for every lookup, even while listening", func() {
		fx := newFixture()
		src := &source{Orgs: store.NewOrgs(db)}
		f := cache.New(0, 0)
		dir := cache.NewDirectory(f, src)
		listen(f)
		for range 2 {
			r, ok, err := dir.RoleOf(context.Background(), fx.org, fx.owner)
			Expect(err).NotTo(HaveOccurred())
			Expect([]any{r, ok}).To(Equal([]any{access.Owner, true}))
			_, _, _, err = dir.BoardVersion(context.Background(), fx.team, fx.owner)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(src.calls.Load()).To(BeEquivalentTo(4))
	})
})
