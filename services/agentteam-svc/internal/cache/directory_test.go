package cache_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/outbox"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/cache"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

// directoryPair is a board store that writes tasks, what a reader sees of a member's role and
// a team's board version, and how long a task write and a role change may take to be read.
type directoryPair struct {
	tasks              board.Store
	role               func(org, member string) (access.Role, bool)
	version            func(team, member string) int64
	taskWait, roleWait time.Duration
}

func plainBoard() board.Store { return store.NewBoard(db, outbox.NewWriter(events.SourceAgentteam)) }

// readDirectory reads roles and board versions through d.
func readDirectory(p *directoryPair, d *cache.Directory) {
	ctx := context.Background()
	p.role = func(org, member string) (access.Role, bool) {
		r, ok, err := d.RoleOf(ctx, org, member)
		Expect(err).NotTo(HaveOccurred())
		return r, ok
	}
	p.version = func(team, member string) int64 {
		v, _, _, err := d.BoardVersion(ctx, team, member)
		Expect(err).NotTo(HaveOccurred())
		return v
	}
}

// The contract of the membership source, run against the plain store and the cached
// directory: a role and a board version read after a change show it (in another process, or
// for a role change written by another connection, once notified).
var _ = DescribeTable("roles and board versions read after writes",
	func(setup func() directoryPair) {
		fx := newFixture()
		p := setup()
		eventually := func(wait time.Duration, actual func() any, matcher OmegaMatcher) {
			GinkgoHelper()
			if wait == 0 {
				Expect(actual()).To(matcher)
				return
			}
			Eventually(actual).WithTimeout(wait).Should(matcher)
		}
		role := func() any { r, _ := p.role(fx.org, fx.owner); return r }
		Expect(role()).To(Equal(access.Owner))
		before := p.version(fx.team, fx.owner)
		fx.newTask(p.tasks)
		eventually(p.taskWait, func() any { return p.version(fx.team, fx.owner) }, BeNumerically(">", before))
		fx.setRole(access.Member)
		eventually(p.roleWait, role, Equal(access.Member))
	},
	Entry("the plain store", func() directoryPair {
		ctx := context.Background()
		orgs := store.NewOrgs(db)
		return directoryPair{
			tasks: plainBoard(),
			role: func(org, member string) (access.Role, bool) {
				r, ok, err := orgs.RoleOf(ctx, org, member)
				Expect(err).NotTo(HaveOccurred())
				return r, ok
			},
			version: func(team, member string) int64 {
				tm, err := orgs.TeamMember(ctx, team, member)
				Expect(err).NotTo(HaveOccurred())
				return tm.BoardVersion
			},
		}
	}),
	Entry("the cached directory, by its own process", func() directoryPair {
		f := cache.New(maxEntries, maxEntries)
		listen(f)
		p := directoryPair{tasks: cache.NewBoard(f, plainBoard()), roleWait: notified}
		readDirectory(&p, cache.NewDirectory(f, store.NewOrgs(db)))
		return p
	}),
	Entry("the cached directory, across two processes", func() directoryPair {
		a, b := cache.New(maxEntries, maxEntries), cache.New(maxEntries, maxEntries)
		listen(a)
		listen(b)
		p := directoryPair{tasks: cache.NewBoard(a, plainBoard()), taskWait: notified, roleWait: notified}
		readDirectory(&p, cache.NewDirectory(b, store.NewOrgs(db)))
		return p
	}),
)
