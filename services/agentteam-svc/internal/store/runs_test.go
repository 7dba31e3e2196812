package store_test

import (
	"context"
	"sync"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/outbox"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/seat"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

// seeded is an organization with a team, a task and a seat, inserted straight into the tables.
type seeded struct{ org, team, task, seat string }

func seed() seeded {
	GinkgoHelper()
	s := seeded{org: uuid.NewString(), team: uuid.NewString(), task: uuid.NewString(), seat: uuid.NewString()}
	Expect(db.Exec(`INSERT INTO organizations (id, name) VALUES (?, 'o')`, s.org).Error).To(Succeed())
	Expect(db.Exec(`INSERT INTO teams (id, organization_id, name) VALUES (?, ?, 't')`, s.team, s.org).Error).To(Succeed())
	Expect(db.Exec(`INSERT INTO work_items (id, team_id, title) VALUES (?, ?, 'task')`, s.task, s.team).Error).To(Succeed())
	Expect(db.Exec(`INSERT INTO seats (id, team_id, role_name, state) VALUES (?, ?, 'QA', 'Open')`, s.seat, s.team).Error).To(Succeed())
	return s
}

func count(query string, args ...any) int {
	GinkgoHelper()
	var n int
	Expect(db.Raw(query, args...).Scan(&n).Error).To(Succeed())
	return n
}

var _ = Describe("queueing an agent run", func() {
	var runs *store.Runs
	BeforeEach(func() { runs = store.NewRuns(db, outbox.NewWriter(events.SourceAgentteam), 2) })

	newRun := func(s seeded) run.Run {
		return run.Run{ID: uuid.NewString(), OrganizationID: s.org, TeamID: s.team, SeatID: s.seat, WorkItemID: s.task}
	}

	It("stores the run Queued, its job Pending and one wake-up", func() {
		s := seed()
		r, created, err := runs.Enqueue(context.Background(), newRun(s), audit.New(s.org, "", "run.queued", "AgentRun", "x", ""))
		Expect(err).NotTo(HaveOccurred())
		Expect(created).To(BeTrue())
		Expect(r.Status).To(Equal(run.Queued))
		Expect(count(`SELECT count(*) FROM jobs WHERE run_id = ? AND status = 'Pending' AND kind = 'agent.run'`, r.ID)).To(Equal(1))
		Expect(count(`SELECT count(*) FROM outbox WHERE subject = ? AND data->>'run_id' = ?`, events.SubjectAgentRunJob, r.ID)).To(Equal(1))
		got, err := runs.Run(context.Background(), r.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.SkippedMCPServers).To(BeEmpty())
	})

	It("answers the active run to concurrent requests for the same seat and item", func() {
		s := seed()
		ids := make(chan string, 8)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				defer GinkgoRecover()
				r, _, err := runs.Enqueue(context.Background(), newRun(s), audit.New(s.org, "", "run.queued", "AgentRun", "x", ""))
				Expect(err).NotTo(HaveOccurred())
				ids <- r.ID
			})
		}
		wg.Wait()
		close(ids)
		seen := map[string]bool{}
		for id := range ids {
			seen[id] = true
		}
		Expect(seen).To(HaveLen(1))
		Expect(count(`SELECT count(*) FROM agent_runs WHERE work_item_id = ?`, s.task)).To(Equal(1))
		Expect(count(`SELECT count(*) FROM jobs j JOIN agent_runs r ON r.id = j.run_id WHERE r.work_item_id = ?`, s.task)).To(Equal(1))
	})
})

var _ = Describe("configuring an agent", func() {
	It("keeps array fields through a round trip, quotes and commas included", func() {
		s := seed()
		seats := store.NewSeats(db)
		mcp := uuid.NewString()
		_, err := seats.ConfigureAgent(context.Background(), s.seat, func(st seat.Seat, _ *seat.Agent) (seat.Agent, audit.Entry, error) {
			return seat.Agent{
				ID: uuid.NewString(), SeatID: st.ID, OrganizationID: s.org, TeamID: s.team, Name: "QA", APIConfigID: uuid.NewString(),
				SkillKeys: []string{"a,b", `say "hi"`, `back\slash`, "NULL", ""}, Docs: nil, MCPServerIDs: []string{mcp},
			}, audit.New(s.org, "", "agent.configured", "Agent", st.ID, ""), nil
		})
		Expect(err).NotTo(HaveOccurred())
		a, err := seats.Agent(context.Background(), s.seat)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.SkillKeys).To(Equal([]string{"a,b", `say "hi"`, `back\slash`, "NULL", ""}))
		Expect(a.Docs).To(Equal([]string{}))
		Expect(a.MCPServerIDs).To(Equal([]string{mcp}))
		st, err := seats.Seat(context.Background(), s.seat)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.State).To(Equal(seat.StateAI))
		Expect(*st.AgentID).To(Equal(a.ID))
	})
})
