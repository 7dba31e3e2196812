package store_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/seat"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

var _ = Describe("locking rows from 30 callers at once over a pool of 5 connections", func() {
	// Each caller locks a row of its own: the rows do not queue the callers, so a call that
	// stalls waits for a connection that a transaction holds while it waits for another.
	DescribeTable("completes every call within a second", Serial, func(prepare func() testkit.ContendedCall) { testkit.Contend(dsn, prepare) },
		Entry("accepting invitations to one organization, each caller its own", func() testkit.ContendedCall {
			owner := uuid.NewString()
			o := org.Organization{ID: uuid.NewString(), Name: "Race", CreatedAt: time.Now().UTC()}
			inviter := orgService(db)
			Expect(store.NewOrgs(db).CreateOrganization(context.Background(), o,
				org.Membership{OrganizationID: o.ID, MemberID: owner, Role: access.Owner, CreatedAt: o.CreatedAt},
				audit.New(o.ID, owner, "organization.created", "Organization", o.ID, o.Name))).To(Succeed())
			tokens := make([]string, testkit.Contenders)
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
		Entry("renaming organizations", func() testkit.ContendedCall {
			seeds := seedEach()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				s := seeds[i]
				_, err := store.NewOrgs(small).RenameOrganization(ctx, s.org, fmt.Sprintf("o%d", i), systemAudit(s.org, "organization.renamed"))
				return err
			}
		}),
		Entry("editing tasks", func() testkit.ContendedCall {
			seeds := seedEach()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				s := seeds[i]
				_, err := newBoard(small).UpdateTask(ctx, s.task, func(w *board.WorkItem) (audit.Entry, error) {
					w.Title = fmt.Sprintf("t%d", i)
					return systemAudit(s.org, "task.updated"), nil
				})
				return err
			}
		}),
		Entry("moving tasks, with their transitions and events", func() testkit.ContendedCall {
			seeds := seedEach()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				s := seeds[i]
				_, _, err := newBoard(small).MoveTask(ctx, s.task, func(w board.WorkItem) (board.Move, error) {
					to := board.StatusBacklog
					if w.Status == board.StatusBacklog {
						to = board.StatusInProgress
					}
					now := time.Now().UTC()
					t := &board.Transition{ID: uuid.NewString(), WorkItemID: w.ID, TeamID: w.TeamID, From: w.Status, To: to, CreatedAt: now}
					w.Status, w.UpdatedAt = to, now
					return board.Move{OrganizationID: s.org, Item: w, Transition: t, Audit: systemAudit(s.org, "task.moved")}, nil
				})
				return err
			}
		}),
		Entry("setting products' identities", func() testkit.ContendedCall {
			products := make([]board.Product, testkit.Contenders)
			for i, s := range seedEach() {
				products[i] = board.Product{ID: uuid.NewString(), OrganizationID: s.org, Name: "p", Kind: board.KindProduct, CreatedAt: time.Now().UTC()}
				Expect(store.NewStructure(db).CreateProduct(context.Background(), products[i], systemAudit(s.org, "product.created"))).To(Succeed())
			}
			return func(ctx context.Context, small *gorm.DB, i int) error {
				p := products[i]
				_, err := store.NewStructure(small).SetProductIdentity(ctx, p.ID, fmt.Sprintf("identity %d", i), systemAudit(p.OrganizationID, "product.identity"))
				return err
			}
		}),
		Entry("configuring seats' agents", func() testkit.ContendedCall {
			seeds := seedEach()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				s := seeds[i]
				_, err := store.NewSeats(small).ConfigureAgent(ctx, s.seat, func(st seat.Seat, current *seat.Agent) (seat.Agent, audit.Entry, error) {
					now := time.Now().UTC()
					a := seat.Agent{ID: uuid.NewString(), SeatID: st.ID, OrganizationID: s.org, TeamID: s.team, Name: fmt.Sprintf("a%d", i),
						APIConfigID: uuid.NewString(), CreatedAt: now, UpdatedAt: now}
					if current != nil {
						a.ID, a.CreatedAt = current.ID, current.CreatedAt
					}
					return a, systemAudit(s.org, "agent.configured"), nil
				})
				return err
			}
		}),
		Entry("updating library items", func() testkit.ContendedCall {
			seeds := seedEach()
			for _, s := range seeds {
				now := time.Now().UTC()
				it := library.Item{ID: uuid.NewString(), Kind: library.Skill, OrganizationID: s.org, Key: "k", Name: "K", Version: "1",
					Visibility: library.PrivateToOrg, Status: library.Draft, Origin: library.Authored, Body: "b", CreatedAt: now, UpdatedAt: now}
				Expect(store.NewLibrary(db).Insert(context.Background(), it, systemAudit(s.org, "skill.authored"))).To(Succeed())
			}
			return func(ctx context.Context, small *gorm.DB, i int) error {
				s := seeds[i]
				_, err := store.NewLibrary(small).Update(ctx, library.Skill, s.org, "k", "1", errors.New("no such item"),
					func(it *library.Item) (audit.Entry, error) {
						it.Name = fmt.Sprintf("K%d", i)
						return systemAudit(s.org, "skill.updated"), nil
					})
				return err
			}
		}),
		Entry("cancelling runs", func() testkit.ContendedCall {
			runs := queuedRuns()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				_, err := store.NewRuns(small, outbox.NewWriter(events.SourceAgentteam), 2).Cancel(ctx, runs[i].ID, func(r *run.Run) (audit.Entry, error) {
					now := time.Now().UTC()
					r.Status, r.FinishedAt, r.UpdatedAt = run.Cancelled, &now, now
					return systemAudit(r.OrganizationID, "run.cancelled"), nil
				})
				return err
			}
		}),
		Entry("claiming runs", func() testkit.ContendedCall {
			runs := queuedRuns()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				_, _, err := store.NewRunWork(small, outbox.NewWriter(events.SourceAgentteam), 2).Claim(ctx, runs[i].ID, fmt.Sprintf("worker-%d", i), time.Minute)
				return err
			}
		}),
	)
})

// systemAudit is an audit entry of the system in the organization.
func systemAudit(organizationID, action string) audit.Entry {
	return audit.New(organizationID, "", action, "Contended", organizationID, "")
}

func newBoard(db *gorm.DB) *store.Board {
	return store.NewBoard(db, outbox.NewWriter(events.SourceAgentteam))
}

// seedEach seeds an organization, team, task and seat for each caller.
func seedEach() []seeded {
	GinkgoHelper()
	seeds := make([]seeded, testkit.Contenders)
	for i := range seeds {
		seeds[i] = seed()
	}
	return seeds
}

// queuedRuns queues a run on each caller's seeded seat and task.
func queuedRuns() []run.Run {
	GinkgoHelper()
	runs := make([]run.Run, testkit.Contenders)
	for i, s := range seedEach() {
		r, _, err := store.NewRuns(db, outbox.NewWriter(events.SourceAgentteam), 2).Enqueue(context.Background(),
			run.Run{ID: uuid.NewString(), OrganizationID: s.org, TeamID: s.team, SeatID: s.seat, WorkItemID: s.task}, systemAudit(s.org, "run.queued"))
		Expect(err).NotTo(HaveOccurred())
		runs[i] = r
	}
	return runs
}

// orgService is the organizations' domain over db, checking access through the plain store
// (every lookup a database read, as on a cache miss).
func orgService(db *gorm.DB) *org.Service {
	orgs := store.NewOrgs(db)
	return org.NewService(orgs, access.NewChecker(orgs), uuid.NewString, func() time.Time { return time.Now().UTC() })
}
