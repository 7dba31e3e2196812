package app_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/mcpclient/mcptest"
)

// modelStub is a local OpenAI-compatible chat-completions server. answer decides each reply
// (status and text); every request is recorded.
type modelStub struct {
	*httptest.Server
	mu       sync.Mutex
	requests []stubRequest
	answer   func(n int, r *http.Request) (int, string)
}

type stubRequest struct {
	Authorization string
	Model         string
	Messages      []struct{ Role, Content string }
}

func newModelStub(answer func(n int, r *http.Request) (int, string)) *modelStub {
	s := &modelStub{answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req stubRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		req.Authorization = r.Header.Get("Authorization")
		s.mu.Lock()
		s.requests = append(s.requests, req)
		n := len(s.requests)
		s.mu.Unlock()
		status, text := s.answer(n, r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status != http.StatusOK {
			_, _ = w.Write([]byte(`{"error":{"message":"stub says no","type":"stub","code":"stub"}}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
			"usage":   map[string]any{"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
		})
	}))
	DeferCleanup(s.Close)
	return s
}

func (s *modelStub) calls() []stubRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]stubRequest(nil), s.requests...)
}

func answering(text string) func(int, *http.Request) (int, string) {
	return func(int, *http.Request) (int, string) { return http.StatusOK, text }
}

// aiTeam is a crew with a product (with an identity), a team, an AI seat, its agent and a task.
type aiTeam struct {
	crew
	TeamID, SeatID, AgentID, TaskID string
}

// agentSpec configures the seeded agent.
type agentSpec struct {
	Primary, Fallback string
	MCPServers        []string
	Budget            *int64
}

// seedTeam seeds the structure a run needs straight into the tables (the board's endpoints
// build the same rows).
func seedTeam(c crew, a agentSpec) aiTeam {
	GinkgoHelper()
	t := aiTeam{crew: c, TeamID: uuid.NewString(), SeatID: uuid.NewString(), AgentID: uuid.NewString(), TaskID: uuid.NewString()}
	product := uuid.NewString()
	exec := func(sql string, args ...any) { Expect(db.Exec(sql, args...).Error).To(Succeed()) }
	exec(`INSERT INTO products (id, organization_id, name, kind, identity) VALUES (?, ?, 'Lumen', 'Product', 'Lumen is a calm video editor for teachers.')`, product, c.OrgID)
	exec(`INSERT INTO teams (id, organization_id, name, product_id) VALUES (?, ?, 'Editors', ?)`, t.TeamID, c.OrgID, product)
	exec(`INSERT INTO seats (id, team_id, role_name, state, agent_id) VALUES (?, ?, 'QA', 'AI', ?)`, t.SeatID, t.TeamID, t.AgentID)
	var fallback *string
	if a.Fallback != "" {
		fallback = &a.Fallback
	}
	servers := "{}"
	if len(a.MCPServers) > 0 {
		b, _ := json.Marshal(a.MCPServers)
		servers = "{" + string(b[1:len(b)-1]) + "}"
	}
	exec(`INSERT INTO agents (id, seat_id, organization_id, team_id, name, persona, api_config_id, fallback_api_config_id, mcp_server_ids, monthly_token_budget)
		VALUES (?, ?, ?, ?, 'Quinn', 'Check every acceptance criterion twice.', ?, ?, ?::uuid[], ?)`,
		t.AgentID, t.SeatID, c.OrgID, t.TeamID, a.Primary, fallback, servers, a.Budget)
	exec(`INSERT INTO work_items (id, team_id, title, description, type, status) VALUES (?, ?, 'Review the export dialog', 'Check the new export dialog.', 'Review', 'Backlog')`,
		t.TaskID, t.TeamID)
	return t
}

// enqueue queues a run for the team's seat and task with POST /api/assembler/runs.
func (t aiTeam) enqueue() string {
	GinkgoHelper()
	var r runOf
	ok("POST", "/api/assembler/runs", t.Owner.Token, map[string]any{"seatId": t.SeatID, "workItemId": t.TaskID}, &r)
	Expect(r.Status).To(Equal("Queued"))
	return r.ID
}

// startWorker runs another app with the agent-run worker on until the spec ends (the suite's
// app serves the API only).
func startWorker() {
	GinkgoHelper()
	c := suiteCfg
	c.Runs.WorkerConcurrency = 2
	serve(c)
}

// runRow is the stored run and its job.
type runRow struct {
	Status, Prompt, Output, Error, ErrorCode string
	Attempts, PromptTokens, CompletionTokens int
	ConnectionID                             *string
	SkippedMcpServers                        string
	JobStatus                                string
}

func readRun(id string) runRow {
	GinkgoHelper()
	var r runRow
	Expect(db.Raw(`SELECT r.status, r.prompt, r.output, r.error, r.error_code, r.attempts, r.prompt_tokens, r.completion_tokens,
			r.connection_id, r.skipped_mcp_servers::text AS skipped_mcp_servers, j.status AS job_status
		FROM agent_runs r JOIN jobs j ON j.run_id = r.id WHERE r.id = ?`, id).Scan(&r).Error).To(Succeed())
	return r
}

func runStatus(id string) func() string { return func() string { return readRun(id).Status } }

// runEvents counts the run's events of the subject in the outbox.
func runEvents(subject, runID string) int {
	GinkgoHelper()
	var n int
	Expect(db.Raw(`SELECT count(*) FROM outbox WHERE type = ? AND data->>'run_id' = ?`, subject, runID).Scan(&n).Error).To(Succeed())
	return n
}

var _ = Describe("the agent-run worker", func() {
	const key = "sk-run-key-9f8e7d6c5b4a"

	BeforeEach(func() { startWorker() })

	It("completes a run against a local OpenAI-compatible server with the assembled prompt", func() {
		c := newCrew()
		model := newModelStub(answering("All acceptance criteria hold."))
		mcp := mcptest.New("mcp-token-77")
		DeferCleanup(mcp.Close)
		wiki := newMCPServer(c, mcp.URL+"/mcp", "Bearer mcp-token-77")
		down := newMCPServer(c, "http://127.0.0.1:1/mcp", "Bearer x")
		conn := newConnection(c, model.URL+"/v1", key)
		t := seedTeam(c, agentSpec{Primary: conn, MCPServers: []string{wiki, down, uuid.NewString()}})
		ok("POST", "/api/memory/entries", c.Member.Token, map[string]any{"teamId": t.TeamID, "kind": "Note", "content": "The export dialog must keep the last chosen format."}, nil)

		id := t.enqueue()
		Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Completed"))
		r := readRun(id)
		Expect(r.Output).To(Equal("All acceptance criteria hold."))
		Expect(r.JobStatus).To(Equal("Done"))
		Expect(r.Attempts).To(Equal(1))
		Expect(*r.ConnectionID).To(Equal(conn))
		Expect([]int{r.PromptTokens, r.CompletionTokens}).To(Equal([]int{120, 30}))
		Expect(r.SkippedMcpServers).To(ContainSubstring(down))
		Expect(r.SkippedMcpServers).To(ContainSubstring("The server could not be reached."))
		Expect(r.SkippedMcpServers).To(ContainSubstring("MCP server not found."))

		Expect(r.Prompt).To(ContainSubstring("Lumen is a calm video editor for teachers."))
		Expect(r.Prompt).To(ContainSubstring("Check every acceptance criterion twice."))
		Expect(r.Prompt).To(ContainSubstring("Wiki / summarize: Summarize a page"))
		Expect(r.Prompt).To(ContainSubstring("1. The export dialog must keep the last chosen format."))
		Expect(r.Prompt).To(MatchRegexp(`(?s)Product: "Lumen".*Operating guide.*Team memory.*MCP tool catalog.*## Task\nType: Review\nTitle: Review the export dialog`))
		Expect(r.Prompt).To(ContainSubstring("untrusted"))

		calls := model.calls()
		Expect(calls).To(HaveLen(1))
		Expect(calls[0].Authorization).To(Equal("Bearer " + key))
		Expect(calls[0].Model).To(Equal("stub-model"))
		Expect(calls[0].Messages).To(HaveLen(2))
		Expect(calls[0].Messages[0].Role).To(Equal("system"))

		Eventually(func() int { return runEvents(events.SubjectRunCompleted, id) }).Should(Equal(1))
		Expect(auditActions(c.OrgID)).To(ContainElement("run.completed"))
		Expect(logs.String()).NotTo(ContainSubstring(key))
		Expect(logs.String()).NotTo(ContainSubstring("mcp-token-77"))
	})

	It("retries a failing primary with backoff, then answers from the fallback", func() {
		c := newCrew()
		primary := newModelStub(func(int, *http.Request) (int, string) { return http.StatusBadGateway, "" })
		fallback := newModelStub(answering("from the fallback"))
		t := seedTeam(c, agentSpec{Primary: newConnection(c, primary.URL+"/v1", key), Fallback: newConnection(c, fallback.URL+"/v1", key+"-2")})

		id := t.enqueue()
		Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Completed"))
		Expect(readRun(id).Output).To(Equal("from the fallback"))
		Expect(*readRun(id).ConnectionID).To(Equal(*t.fallbackID()))
		Expect(primary.calls()).To(HaveLen(1 + suiteCfg.Runs.ModelRetries))
		Expect(fallback.calls()).To(HaveLen(1))
	})

	It("does not retry a 401, and fails the run saying the key was refused", func() {
		c := newCrew()
		model := newModelStub(func(int, *http.Request) (int, string) { return http.StatusUnauthorized, "" })
		t := seedTeam(c, agentSpec{Primary: newConnection(c, model.URL+"/v1", key)})

		id := t.enqueue()
		Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Failed"))
		r := readRun(id)
		Expect(r.ErrorCode).To(Equal("model_unauthorized"))
		Expect(r.Error).To(Equal("The model endpoint refused the API key (HTTP 401)."))
		Expect(r.JobStatus).To(Equal("Failed"))
		Consistently(func() int { return len(model.calls()) }).WithTimeout(300 * time.Millisecond).Should(Equal(1))
		Eventually(func() int { return runEvents(events.SubjectRunFailed, id) }).Should(Equal(1))
		Expect(logs.String()).NotTo(ContainSubstring(key))
	})

	It("fails a run whose agent names a deleted connection, clearly", func() {
		c := newCrew()
		model := newModelStub(answering("never"))
		conn := newConnection(c, model.URL+"/v1", key)
		Expect(client.Do("DELETE", "/api/orgboard/model-connections/"+conn, c.Owner.Token, nil).Status).To(Equal(http.StatusOK))
		t := seedTeam(c, agentSpec{Primary: conn})

		id := t.enqueue()
		Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Failed"))
		Expect(readRun(id).ErrorCode).To(Equal("no_connection"))
		Expect(model.calls()).To(BeEmpty())
	})

	It("never uses another organization's model connection or MCP server, even for an agent stored before configuration checked them", func() {
		c, other := newCrew(), newCrew()
		theirModel, ownModel := newModelStub(answering("never")), newModelStub(answering("Checked with our own model."))
		mcp := mcptest.New("mcp-token-theirs")
		DeferCleanup(mcp.Close)
		theirs := newConnection(other, theirModel.URL+"/v1", key)
		theirServer := newMCPServer(other, mcp.URL+"/mcp", "Bearer mcp-token-theirs")
		own := newConnection(c, ownModel.URL+"/v1", key)
		t := seedTeam(c, agentSpec{Primary: theirs, Fallback: own, MCPServers: []string{theirServer}})

		id := t.enqueue()
		Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Completed"))
		r := readRun(id)
		Expect(*r.ConnectionID).To(Equal(own))
		Expect(r.SkippedMcpServers).To(ContainSubstring(theirServer))
		Expect(r.SkippedMcpServers).To(ContainSubstring("MCP server not found."))
		Expect(theirModel.calls()).To(BeEmpty())
		Expect(mcp.Methods()).To(BeEmpty())
		Expect(ownModel.calls()).To(HaveLen(1))
	})

	It("refuses a run over the agent's monthly token budget before calling the model", func() {
		c := newCrew()
		model := newModelStub(answering("never"))
		budget := int64(100)
		t := seedTeam(c, agentSpec{Primary: newConnection(c, model.URL+"/v1", key), Budget: &budget})
		Expect(db.Exec(`INSERT INTO agent_runs (id, organization_id, team_id, seat_id, work_item_id, agent_id, status, prompt_tokens, completion_tokens)
			VALUES (?, ?, ?, ?, ?, ?, 'Completed', 80, 20)`, uuid.NewString(), c.OrgID, t.TeamID, t.SeatID, t.TaskID, t.AgentID).Error).To(Succeed())

		id := t.enqueue()
		Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Failed"))
		r := readRun(id)
		Expect(r.ErrorCode).To(Equal("budget_exceeded"))
		Expect(r.Error).To(Equal("The agent used 100 of its 100 tokens this month; the run was not sent to the model."))
		Expect(model.calls()).To(BeEmpty())
	})

	It("stops a cancelled run mid-call and never finishes over it", func() {
		c := newCrew()
		release := make(chan struct{})
		DeferCleanup(func() { close(release) })
		model := newModelStub(func(_ int, r *http.Request) (int, string) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return http.StatusOK, "too late"
		})
		t := seedTeam(c, agentSpec{Primary: newConnection(c, model.URL+"/v1", key)})
		id := t.enqueue()
		Eventually(func() int { return len(model.calls()) }).WithTimeout(20 * time.Second).Should(Equal(1))
		Expect(readRun(id).Status).To(Equal("Running"))

		ok("POST", "/api/assembler/runs/"+id+"/cancel", c.Member.Token, nil, nil)
		Eventually(logs.String).WithTimeout(5 * time.Second).Should(MatchRegexp(`"msg":"run was cancelled or taken over while it ran"[^\n]*"run_id":"` + id))
		r := readRun(id)
		Expect(r.Status).To(Equal("Cancelled"))
		Expect(r.Output).To(BeEmpty())
		Expect(runEvents(events.SubjectRunCompleted, id) + runEvents(events.SubjectRunFailed, id)).To(BeZero())
	})

	It("requeues a run whose worker died holding the lease, and another worker finishes it", func() {
		c := newCrew()
		model := newModelStub(answering("finished by the next worker"))
		t := seedTeam(c, agentSpec{Primary: newConnection(c, model.URL+"/v1", key)})
		id := t.seedRun("Running", "Processing", 1, time.Now().Add(-time.Second), time.Now())

		Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Completed"))
		r := readRun(id)
		Expect(r.Attempts).To(Equal(2))
		Expect(r.Output).To(Equal("finished by the next worker"))
	})

	It("fails a run whose workers died once the attempts are used up", func() {
		c := newCrew()
		t := seedTeam(c, agentSpec{Primary: uuid.NewString()})
		id := t.seedRun("Running", "Processing", suiteCfg.Runs.MaxAttempts, time.Now().Add(-time.Second), time.Now())

		Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Failed"))
		r := readRun(id)
		Expect(r.ErrorCode).To(Equal("attempts_exhausted"))
		Expect(r.JobStatus).To(Equal("Failed"))
		Eventually(func() int { return runEvents(events.SubjectRunFailed, id) }).Should(Equal(1))
	})

	It("fails a run that waited in the queue longer than the limit", func() {
		c := newCrew()
		t := seedTeam(c, agentSpec{Primary: uuid.NewString()})
		id := t.seedRun("Queued", "Pending", 0, time.Time{}, time.Now().Add(-suiteCfg.Runs.QueuedLimit-time.Minute))

		Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Failed"))
		Expect(readRun(id).ErrorCode).To(Equal("queue_timeout"))
	})
})

var _ = Describe("a worker process killed mid-run", func() {
	const key = "sk-run-key-9f8e7d6c5b4a"

	It("leaves its run to another process, which finishes it after the lease lapses", func() {
		c := newCrew()
		called := make(chan struct{}, 4)
		release := make(chan struct{})
		DeferCleanup(func() { close(release) })
		model := newModelStub(func(n int, r *http.Request) (int, string) {
			called <- struct{}{}
			if n == 1 {
				select {
				case <-r.Context().Done():
				case <-release:
				}
				return http.StatusOK, "from the killed worker"
			}
			return http.StatusOK, "finished by the survivor"
		})
		t := seedTeam(c, agentSpec{Primary: newConnection(c, model.URL+"/v1", key)})

		victim := startWorkerProcess()
		id := t.enqueue()
		Eventually(called).WithTimeout(30 * time.Second).Should(Receive())
		Expect(victim.Process.Kill()).To(Succeed())
		_ = victim.Wait()
		Expect(readRun(id).Status).To(Equal("Running"))

		startWorker()
		Eventually(runStatus(id)).WithTimeout(30 * time.Second).Should(Equal("Completed"))
		r := readRun(id)
		Expect(r.Output).To(Equal("finished by the survivor"))
		Expect(r.Attempts).To(Equal(2))
	})
})

// fallbackID is the seeded agent's fallback connection.
func (t aiTeam) fallbackID() *string {
	GinkgoHelper()
	var id *string
	Expect(db.Raw(`SELECT fallback_api_config_id FROM agents WHERE id = ?`, t.AgentID).Scan(&id).Error).To(Succeed())
	return id
}

// seedRun stores a run and its job in the given states without waking a worker, as a worker
// that died (or a lost wake-up) leaves them; the sweeper must find it.
func (t aiTeam) seedRun(status, jobStatus string, attempts int, leaseUntil, createdAt time.Time) string {
	GinkgoHelper()
	id := uuid.NewString()
	var lease *time.Time
	if !leaseUntil.IsZero() {
		lease = &leaseUntil
	}
	Expect(db.Exec(`INSERT INTO agent_runs (id, organization_id, team_id, seat_id, work_item_id, agent_id, status, attempts, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, t.OrgID, t.TeamID, t.SeatID, t.TaskID, t.AgentID, status, attempts, createdAt).Error).To(Succeed())
	Expect(db.Exec(`INSERT INTO jobs (id, kind, run_id, status, attempts, lease_owner, lease_until, updated_at)
		VALUES (?, 'agent.run', ?, ?, ?, 'dead-worker', ?, ?)`, uuid.NewString(), id, jobStatus, attempts, lease, createdAt).Error).To(Succeed())
	return id
}

// startWorkerProcess builds the service's binary and runs it as a worker on the suite's
// database and bus, so that a spec can kill it with SIGKILL mid-run.
func startWorkerProcess() *exec.Cmd {
	GinkgoHelper()
	bin := filepath.Join(GinkgoT().TempDir(), "agentteam-svc")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/agentteam-svc")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build: %s", out)
	c := suiteCfg
	cmd := exec.Command(bin, "serve")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "HTTP_ADDR=127.0.0.1:0",
		"DATABASE_URL=" + c.DB.DSN, "NATS_URL=" + c.NATS.URL, "NATS_SUBJECT_PREFIX=" + c.NATS.Prefix,
		"JWKS_URL=" + c.Auth.JWKSURL, "JWT_ISSUER=" + c.Auth.Issuer, "OUTBOUND_ALLOW_LOOPBACK=true",
		"RUN_LEASE=" + c.Runs.Lease.String(), "RUN_SWEEP_INTERVAL=" + c.Runs.SweepInterval.String(), "RUN_WORKER_CONCURRENCY=2",
	}
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}
