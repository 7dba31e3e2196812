package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/agentteam-svc/api"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/app"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
)

// memoryEntry is the wire form of a memory entry.
type memoryEntry struct {
	ID           string  `json:"id"`
	TeamID       string  `json:"teamId"`
	Kind         string  `json:"kind"`
	Content      string  `json:"content"`
	RunID        *string `json:"runId"`
	AgentID      *string `json:"agentId"`
	EditDistance *int    `json:"editDistance"`
	CreatedBy    *string `json:"createdBy"`
}

type searchHit struct {
	Entry memoryEntry `json:"entry"`
	Score float64     `json:"score"`
}

// memTeam inserts a team of the organization straight into the table and returns its id.
func memTeam(orgID string) string {
	GinkgoHelper()
	id := uuid.NewString()
	Expect(db.Exec(`INSERT INTO teams (id, organization_id, name) VALUES (?, ?, 'Memory team')`, id, orgID).Error).To(Succeed())
	return id
}

// memRun inserts a run of the team in the given status, with its work item and seat, and
// returns the run id and its agent id.
func memRun(orgID, teamID, status, output string, tokens int) (runID, agentID string) {
	GinkgoHelper()
	item, seat := uuid.NewString(), uuid.NewString()
	runID, agentID = uuid.NewString(), uuid.NewString()
	Expect(db.Exec(`INSERT INTO work_items (id, team_id, title) VALUES (?, ?, 'Review')`, item, teamID).Error).To(Succeed())
	Expect(db.Exec(`INSERT INTO seats (id, team_id, role_name, state) VALUES (?, ?, 'QA', 'AI')`, seat, teamID).Error).To(Succeed())
	Expect(db.Exec(`INSERT INTO agent_runs (id, organization_id, team_id, seat_id, work_item_id, agent_id, status, output, prompt_tokens, completion_tokens)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, runID, orgID, teamID, seat, item, agentID, status, output, tokens/2, tokens-tokens/2).Error).To(Succeed())
	return runID, agentID
}

// agentRun inserts another run of an existing agent.
func agentRun(orgID, teamID, agentID, status, output string, tokens int) string {
	GinkgoHelper()
	runID, _ := memRun(orgID, teamID, status, output, tokens)
	Expect(db.Exec(`UPDATE agent_runs SET agent_id = ? WHERE id = ?`, agentID, runID).Error).To(Succeed())
	return runID
}

func createEntry(token, teamID, kind, content string) memoryEntry {
	GinkgoHelper()
	r := client.Do("POST", "/api/memory/entries", token, map[string]any{"teamId": teamID, "kind": kind, "content": content})
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	var e memoryEntry
	r.JSON(&e)
	return e
}

func searchOn(api *testkit.API, token, teamID, q string, extra string) []searchHit {
	GinkgoHelper()
	r := api.Do("GET", "/api/memory/search?teamId="+teamID+"&q="+strings.ReplaceAll(q, " ", "+")+extra, token, nil)
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	var hits []searchHit
	r.JSON(&hits)
	return hits
}

func contents(hits []searchHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Entry.Content
	}
	return out
}

var _ = Describe("team memory entries", func() {
	var c crew
	var team string

	BeforeEach(func() {
		c = newCrew()
		team = memTeam(c.OrgID)
	})

	DescribeTable("writing an entry needs WorkTasks on the team",
		func(role string, want int) {
			r := client.Do("POST", "/api/memory/entries", c.as(role), map[string]any{"teamId": team, "kind": "Note", "content": "Deploys go out on Tuesdays."})
			Expect(r.Status).To(Equal(want), string(r.Body))
			if want == http.StatusForbidden {
				Expect(r.Body).To(BeEmpty())
			}
		},
		Entry("Owner", "Owner", http.StatusOK),
		Entry("TeamOwner", "TeamOwner", http.StatusOK),
		Entry("Member", "Member", http.StatusOK),
		Entry("stranger", "Stranger", http.StatusForbidden),
	)

	DescribeTable("reading, searching and deleting need a role in the organization",
		func(role string, want int) {
			e := createEntry(c.Owner.Token, team, "Note", "Deploys go out on Tuesdays.")
			Expect(client.Do("GET", "/api/memory/entries?teamId="+team, c.as(role), nil).Status).To(Equal(want))
			Expect(client.Do("GET", "/api/memory/search?teamId="+team+"&q=deploy", c.as(role), nil).Status).To(Equal(want))
			Expect(client.Do("DELETE", "/api/memory/entries/"+e.ID, c.as(role), nil).Status).To(Equal(want))
		},
		Entry("Owner", "Owner", http.StatusOK),
		Entry("TeamOwner", "TeamOwner", http.StatusOK),
		Entry("Member", "Member", http.StatusOK),
		Entry("stranger", "Stranger", http.StatusForbidden),
	)

	It("answers the entry it wrote and audits memory.created", func() {
		e := createEntry(c.Member.Token, team, "Correction", "Use the staging database for load tests.")
		Expect(e.TeamID).To(Equal(team))
		Expect(e.Kind).To(Equal("Correction"))
		Expect(e.Content).To(Equal("Use the staging database for load tests."))
		Expect(*e.CreatedBy).To(Equal(c.Member.ID))
		Expect(e.RunID).To(BeNil())
		Expect(auditActions(c.OrgID)[0]).To(Equal("memory.created"))
	})

	DescribeTable("refuses a bad entry with a plain-text 400 and writes nothing",
		func(body map[string]any, message string) {
			if _, ok := body["teamId"]; !ok {
				body["teamId"] = team
			}
			r := client.Do("POST", "/api/memory/entries", c.Owner.Token, body)
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			if message != "" {
				Expect(string(r.Body)).To(Equal(message))
			}
			Expect(client.Do("GET", "/api/memory/entries?teamId="+team, c.Owner.Token, nil).Body).To(MatchJSON(`[]`))
		},
		Entry("blank content", map[string]any{"kind": "Note", "content": "  "}, "Content is required."),
		Entry("unknown kind", map[string]any{"kind": "Idea", "content": "x"}, "Kind must be Approval, Correction or Note."),
		Entry("content too long", map[string]any{"kind": "Note", "content": strings.Repeat("a", 20001)}, "Content must be at most 20000 characters."),
		Entry("a team id that is not a uuid", map[string]any{"teamId": "nope", "kind": "Note", "content": "x"}, ""),
	)

	It("answers 404 Team not found. for an unknown team", func() {
		for _, r := range []testkit.Response{
			client.Do("POST", "/api/memory/entries", c.Owner.Token, map[string]any{"teamId": uuid.NewString(), "kind": "Note", "content": "x"}),
			client.Do("GET", "/api/memory/entries?teamId="+uuid.NewString(), c.Owner.Token, nil),
			client.Do("GET", "/api/memory/search?q=x&teamId="+uuid.NewString(), c.Owner.Token, nil),
		} {
			Expect(r.Status).To(Equal(http.StatusNotFound))
			Expect(string(r.Body)).To(Equal("Team not found."))
		}
	})

	It("answers 401 without a token", func() {
		Expect(client.Do("POST", "/api/memory/entries", "", map[string]any{"teamId": team, "kind": "Note", "content": "x"}).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("GET", "/api/memory/search?q=x&teamId="+team, "", nil).Status).To(Equal(http.StatusUnauthorized))
	})

	It("lists a team's entries newest first, a page at a time", func() {
		for i := range 3 {
			createEntry(c.Owner.Token, team, "Note", fmt.Sprint("note ", i))
		}
		createEntry(c.Owner.Token, memTeam(c.OrgID), "Note", "another team's note")
		var list []memoryEntry
		client.Do("GET", "/api/memory/entries?teamId="+team, c.Member.Token, nil).JSON(&list)
		Expect(list).To(HaveLen(3))
		Expect(list[0].Content).To(Equal("note 2"))
		Expect(list[2].Content).To(Equal("note 0"))
		client.Do("GET", "/api/memory/entries?teamId="+team+"&page=2&pageSize=2", c.Member.Token, nil).JSON(&list)
		Expect(list).To(HaveLen(1))
		Expect(list[0].Content).To(Equal("note 0"))
		Expect(client.Do("GET", "/api/memory/entries?teamId="+team+"&pageSize=101", c.Member.Token, nil).Status).To(Equal(http.StatusBadRequest))
	})

	It("deletes an entry from the list and from search, audits memory.deleted, and answers 404 after", func() {
		e := createEntry(c.Owner.Token, team, "Note", "The release train leaves on Fridays.")
		Expect(searchOn(client, c.Owner.Token, team, "release train", "")).To(HaveLen(1))
		r := client.Do("DELETE", "/api/memory/entries/"+e.ID, c.Member.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var gone memoryEntry
		r.JSON(&gone)
		Expect(gone.Content).To(Equal("The release train leaves on Fridays."))
		Expect(auditActions(c.OrgID)[0]).To(Equal("memory.deleted"))
		Expect(searchOn(client, c.Owner.Token, team, "release train", "")).To(BeEmpty())
		Expect(client.Do("GET", "/api/memory/entries?teamId="+team, c.Owner.Token, nil).Body).To(MatchJSON(`[]`))

		r = client.Do("DELETE", "/api/memory/entries/"+e.ID, c.Member.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Memory entry not found."))
		Expect(client.Do("DELETE", "/api/memory/entries/"+uuid.NewString(), c.Member.Token, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", "/api/memory/entries/not-a-uuid", c.Member.Token, nil).Status).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("searching team memory", func() {
	var c crew
	var team string

	BeforeEach(func() {
		c = newCrew()
		team = memTeam(c.OrgID)
	})

	It("ranks the team's entries by similarity to the query, best first, with scores", func() {
		createEntry(c.Owner.Token, team, "Note", "Choose a warmer colour palette for the landing page.")
		createEntry(c.Owner.Token, team, "Correction", "The database migration failed on startup; run migrations before deploying.")
		createEntry(c.Owner.Token, team, "Approval", "Quarterly revenue report for the finance team.")
		createEntry(c.Owner.Token, memTeam(c.OrgID), "Note", "Database migration checklist of another team.")

		hits := searchOn(client, c.Member.Token, team, "database migration", "")
		Expect(hits).To(HaveLen(3))
		Expect(hits[0].Entry.Content).To(HavePrefix("The database migration failed"))
		Expect(hits[0].Score).To(BeNumerically(">", hits[1].Score))
		Expect(hits[1].Score).To(BeNumerically(">=", hits[2].Score))

		hits = searchOn(client, c.Member.Token, team, "landing page colours", "&limit=1")
		Expect(contents(hits)).To(Equal([]string{"Choose a warmer colour palette for the landing page."}))
	})

	It("answers 10 entries unless a limit is given", func() {
		for i := range 12 {
			createEntry(c.Owner.Token, team, "Note", fmt.Sprint("deployment note number ", i))
		}
		Expect(searchOn(client, c.Owner.Token, team, "deployment", "")).To(HaveLen(10))
		Expect(searchOn(client, c.Owner.Token, team, "deployment", "&limit=12")).To(HaveLen(12))
	})

	It("answers an empty list for a team without memory", func() {
		Expect(searchOn(client, c.Owner.Token, team, "anything", "")).To(BeEmpty())
	})

	DescribeTable("refuses a bad query with a plain-text 400",
		func(query, message string) {
			r := client.Do("GET", "/api/memory/search?teamId="+team+query, c.Owner.Token, nil)
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			if message != "" {
				Expect(string(r.Body)).To(Equal(message))
			}
		},
		Entry("blank q", "&q=+", "q is required."),
		Entry("limit 0", "&q=x&limit=0", "limit must be between 1 and 50."),
		Entry("limit 51", "&q=x&limit=51", "limit must be between 1 and 50."),
		Entry("q too long", "&q="+strings.Repeat("a", 2001), "q must be at most 2000 characters."),
		Entry("limit not a number", "&q=x&limit=ten", ""),
	)
})

var _ = Describe("memory across replicas", func() {
	It("finds on one replica what another wrote, and forgets what another deleted", func(ctx SpecContext) {
		second := startReplica()
		c := newCrew()
		team := memTeam(c.OrgID)
		createEntry(c.Owner.Token, team, "Note", "Invoices are archived for ten years.")
		Expect(searchOn(second, c.Member.Token, team, "invoices archived", "")).To(HaveLen(1))

		e := createEntry(c.Owner.Token, team, "Note", "Backups are restored monthly as a drill.")
		Eventually(func() []string {
			return contents(searchOn(second, c.Member.Token, team, "backups restored drill", "&limit=1"))
		}).
			Should(Equal([]string{"Backups are restored monthly as a drill."}))

		Expect(client.Do("DELETE", "/api/memory/entries/"+e.ID, c.Owner.Token, nil).Status).To(Equal(http.StatusOK))
		Eventually(func() []string { return contents(searchOn(second, c.Member.Token, team, "backups restored drill", "")) }).
			ShouldNot(ContainElement("Backups are restored monthly as a drill."))
	})
})

// startReplica runs a second instance of the service on the suite's database and NATS and
// returns a client for it; it stops when the spec ends. Options change its configuration.
func startReplica(options ...func(*config.Config)) *testkit.API {
	GinkgoHelper()
	cfg := suiteCfg
	cfg.HTTP.Addr = "127.0.0.1:0"
	for _, o := range options {
		o(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, slog.New(slog.NewJSONHandler(GinkgoWriter, nil)))
	Expect(err).NotTo(HaveOccurred())
	addr, err := a.Listen()
	Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
		a.Close()
	})
	replica := testkit.NewAPI("http://"+addr.String(), api.OpenAPI)
	Eventually(func() int { return replica.Do("GET", "/readyz", "", nil).Status }).Should(Equal(http.StatusOK))
	return replica
}

var _ = Describe("seeding memory for the search benchmark", func() {
	It("creates an organization owned by the member, a team and searchable entries", func(ctx SpecContext) {
		u := newUser()
		s, err := app.SeedMemory(ctx, suiteCfg, 150, u.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(s.MemberID).To(Equal(u.ID))
		Expect(s.Entries).To(Equal(150))
		hits := searchOn(client, u.Token, s.TeamID, "database migration", "&limit=50")
		Expect(hits).To(HaveLen(50))
		var list []memoryEntry
		client.Do("GET", "/api/memory/entries?teamId="+s.TeamID+"&pageSize=100&page=2", u.Token, nil).JSON(&list)
		Expect(list).To(HaveLen(50))
	})
})

// embeddingsServer is a local OpenAI-compatible embeddings endpoint answering, for each input,
// a dims-long vector hashed from the input's words (so equal words point the same way).
func embeddingsServer(dims int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		Expect(json.NewDecoder(r.Body).Decode(&req)).To(Succeed())
		data := make([]map[string]any, len(req.Input))
		for i, text := range req.Input {
			v := make([]float64, dims)
			for _, word := range strings.Fields(strings.ToLower(text)) {
				h := fnv.New32a()
				_, _ = h.Write([]byte(word))
				v[h.Sum32()%uint32(dims)]++
			}
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		w.Header().Set("Content-Type", "application/json")
		Expect(json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": "stub", "data": data, "usage": map[string]any{}})).To(Succeed())
	}))
	DeferCleanup(srv.Close)
	return srv.URL
}

func withEmbeddings(url string) func(*config.Config) {
	return func(c *config.Config) {
		c.Embeddings.BaseURL, c.Embeddings.Model, c.OutboundAllowLoopback = url, "stub-embed", true
	}
}

var _ = Describe("memory with a configured embeddings endpoint", func() {
	It("ranks with the endpoint's vectors and never mixes them with the local embedder's", func() {
		remote := startReplica(withEmbeddings(embeddingsServer(384)))
		c := newCrew()
		team := memTeam(c.OrgID)
		createEntry(c.Owner.Token, team, "Note", "kubernetes helm chart upgrade")
		r := remote.Do("POST", "/api/memory/entries", c.Owner.Token, map[string]any{"teamId": team, "kind": "Note", "content": "helm chart values for staging"})
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))

		Expect(contents(searchOn(remote, c.Member.Token, team, "helm chart", ""))).To(Equal([]string{"helm chart values for staging"}))
		Expect(contents(searchOn(client, c.Member.Token, team, "helm chart", ""))).To(Equal([]string{"kubernetes helm chart upgrade"}))
		var list []memoryEntry
		client.Do("GET", "/api/memory/entries?teamId="+team, c.Member.Token, nil).JSON(&list)
		Expect(list).To(HaveLen(2), "both entries stay listed")
	})

	It("answers 503 and writes nothing when the endpoint answers vectors of the wrong length", func() {
		remote := startReplica(withEmbeddings(embeddingsServer(1536)))
		c := newCrew()
		team := memTeam(c.OrgID)
		r := remote.Do("POST", "/api/memory/entries", c.Owner.Token, map[string]any{"teamId": team, "kind": "Note", "content": "anything"})
		Expect(r.Status).To(Equal(http.StatusServiceUnavailable))
		Expect(string(r.Body)).To(Equal("the embeddings endpoint answered vectors of the wrong length"))
		Expect(client.Do("GET", "/api/memory/entries?teamId="+team, c.Owner.Token, nil).Body).To(MatchJSON(`[]`))
		Expect(auditActions(c.OrgID)).NotTo(ContainElement("memory.created"))
	})
})
