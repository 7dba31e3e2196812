package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/mcpclient/mcptest"
)

// sseEvent is one Server-Sent Event as a client reads it.
type sseEvent struct {
	ID    int64
	Event string
	Data  map[string]any
}

// eventStream is an open GET /runs/{id}/events.
type eventStream struct {
	status     int
	retryAfter string
	events     chan sseEvent
	cancel     context.CancelFunc
	// ended is closed once the server ended the stream.
	ended chan struct{}
}

// followRun opens the run's event stream on api with token and extra headers (name, value)
// and reads it in the background until the spec ends.
func followRun(api *testkit.API, runID, token, query string, header ...string) *eventStream {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api.URL("/api/assembler/runs/"+runID+"/events"+query), nil)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	s := &eventStream{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After"), events: make(chan sseEvent, 100), cancel: cancel,
		ended: make(chan struct{})}
	DeferCleanup(cancel)
	if res.StatusCode != http.StatusOK {
		_ = res.Body.Close()
		close(s.ended)
		return s
	}
	Expect(res.Header.Get("Content-Type")).To(Equal("text/event-stream"))
	go func() {
		defer GinkgoRecover()
		defer close(s.ended)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				e.ID, _ = strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
			case strings.HasPrefix(line, "event: "):
				e.Event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e.Data)
			case line == "" && e.Event != "":
				s.events <- e
				e = sseEvent{}
			}
		}
	}()
	return s
}

// next is the stream's next event, within timeout.
func (s *eventStream) next(timeout time.Duration) sseEvent {
	GinkgoHelper()
	var e sseEvent
	Eventually(s.events).WithTimeout(timeout).Should(Receive(&e))
	return e
}

// rest reads events until the server ends the stream.
func (s *eventStream) rest() []sseEvent {
	GinkgoHelper()
	Eventually(s.ended).WithTimeout(20 * time.Second).Should(BeClosed())
	var out []sseEvent
	for {
		select {
		case e := <-s.events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// gate is a model stub's answer that waits until the gate opens or the call is abandoned.
type gate struct {
	open chan struct{}
	once sync.Once
}

func newGate() *gate {
	g := &gate{open: make(chan struct{})}
	DeferCleanup(g.release)
	return g
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

func (g *gate) answer(text string) func(int, *http.Request) (int, string) {
	return func(_ int, r *http.Request) (int, string) {
		select {
		case <-r.Context().Done():
		case <-g.open:
		}
		return http.StatusOK, text
	}
}

var _ = Describe("a run's live event stream", func() {
	const key = "sk-events-key-4242"

	It("streams the run's status changes and steps, and resumes after Last-Event-ID on another replica with no gap or repeat", func() {
		startWorker()
		other := serve(suiteCfg)
		c := newCrew()
		server := mcptest.NewAnnotated()
		DeferCleanup(server.Close)
		mcpID := newMCPServer(c, server.URL+"/mcp", "Bearer mcp-secret-events")
		g := newGate()
		model := toolModel("The export page reads well.", []stubCall{{Name: mcptest.ReadPage, Arguments: `{"page":"export"}`}})
		model.answer = g.answer("The export page reads well.")
		t := seedTeam(c, agentSpec{Primary: newConnection(c, model.URL+"/v1", key), MCPServers: []string{mcpID}, Autonomy: "Autonomous"})
		id := t.enqueue()

		first := followRun(client, id, c.Member.Token, "")
		Expect(first.next(5 * time.Second)).To(MatchFields(IgnoreExtras, Fields{
			"ID": BeEquivalentTo(1), "Event": Equal("status"), "Data": HaveKeyWithValue("status", "Queued"),
		}))
		Expect(first.next(20 * time.Second)).To(MatchFields(IgnoreExtras, Fields{
			"ID": BeEquivalentTo(2), "Event": Equal("status"), "Data": HaveKeyWithValue("status", "Running"),
		}))
		// The first model call asked for the tool, which ran; the second model call waits.
		Eventually(func() int { return len(model.calls()) }).WithTimeout(20 * time.Second).Should(Equal(2))
		var seen []sseEvent
		for len(seen) == 0 || seen[len(seen)-1].Data["kind"] != "ToolCall" || seen[len(seen)-1].Data["status"] == "Running" {
			seen = append(seen, first.next(5*time.Second))
		}
		Expect(seen[0].Data).To(HaveKeyWithValue("kind", "Model"))
		Expect(seen[len(seen)-1].Data).To(And(HaveKeyWithValue("toolName", mcptest.ReadPage), HaveKeyWithValue("status", "Succeeded")))
		last := seen[len(seen)-1].ID
		first.cancel()

		g.release()
		rest := followRun(other, id, c.Member.Token, "", "Last-Event-ID", strconv.FormatInt(last, 10)).rest()
		Expect(rest).NotTo(BeEmpty())
		for i, e := range rest {
			Expect(e.ID).To(Equal(last+int64(i)+1), "event ids follow Last-Event-ID without a gap or a repeat")
		}
		Expect(rest[len(rest)-1]).To(MatchFields(IgnoreExtras, Fields{"Event": Equal("status"), "Data": HaveKeyWithValue("status", "Completed")}))

		By("a stream of a finished run answers what follows Last-Event-ID, each step as it ended, and ends")
		all := followRun(other, id, c.Member.Token, "?lastEventId=0").rest()
		Expect(all).To(HaveLen(int(rest[len(rest)-1].ID)))
		var steps []map[string]any
		for _, e := range all {
			if e.Event == "step" && !slices.ContainsFunc(steps, func(d map[string]any) bool { return d["seq"] == e.Data["seq"] }) {
				steps = append(steps, e.Data)
			}
		}
		Expect(steps).To(HaveExactElements(
			And(HaveKeyWithValue("kind", "Model"), HaveKeyWithValue("askedForTools", true)),
			And(HaveKeyWithValue("kind", "ToolCall"), HaveKeyWithValue("toolName", mcptest.ReadPage), HaveKeyWithValue("status", "Succeeded")),
			And(HaveKeyWithValue("kind", "Model"), HaveKeyWithValue("askedForTools", false)),
		))
		Expect(followRun(client, id, c.Member.Token, "", "Last-Event-ID", strconv.FormatInt(rest[len(rest)-1].ID, 10)).rest()).To(BeEmpty())
		Expect(logs.String()).NotTo(ContainSubstring("mcp-secret-events"))
	})

	It("is refused to whoever may not read the run, and for a Last-Event-ID that is not an event id", func() {
		c := newCrew()
		t := seedTeam(c, agentSpec{Primary: uuid.NewString()})
		id := t.enqueue()
		Expect(followRun(client, id, c.Stranger.Token, "").status).To(Equal(http.StatusForbidden))
		Expect(followRun(client, id, c.Member.Token, "", "Last-Event-ID", "soon").status).To(Equal(http.StatusBadRequest))
		Expect(followRun(client, "7d3c9f8e-0000-4000-8000-000000000001", c.Member.Token, "").status).To(Equal(http.StatusNotFound))
	})

	It("serves as many streams as the replica may, answers one more 503 with Retry-After, and frees a stream's place when its client leaves", func() {
		edited := suiteCfg
		edited.Runs.EventStreams = 1
		api := serve(edited)
		c := newCrew()
		id := seedTeam(c, agentSpec{Primary: uuid.NewString()}).enqueue()
		first := followRun(api, id, c.Member.Token, "")
		Expect(first.next(5 * time.Second).Data).To(HaveKeyWithValue("status", "Queued"))

		second := followRun(api, id, c.Member.Token, "")
		Expect(second.status).To(Equal(http.StatusServiceUnavailable))
		Expect(second.retryAfter).To(Equal("5"))

		first.cancel()
		Eventually(func() int {
			s := followRun(api, id, c.Member.Token, "")
			defer s.cancel()
			return s.status
		}).WithTimeout(5 * time.Second).Should(Equal(http.StatusOK))
	})
})

var _ = Describe("cancelling a run", func() {
	const key = "sk-cancel-key-1717"

	// oneWorker runs a worker that executes one run at a time and renews its leases only every
	// 20 s, so that only the cancel's notification can stop a run sooner.
	oneWorker := func() {
		startWorkerWith(func(c *config.Config) {
			c.Runs.WorkerConcurrency = 1
			c.Runs.Lease = time.Minute
		})
	}

	// cancelThenNext cancels the run and expects the worker's next run to complete within 1.5 s.
	cancelThenNext := func(c crew, id, nextID string) {
		GinkgoHelper()
		cancelled := time.Now()
		ok("POST", "/api/assembler/runs/"+id+"/cancel", c.Member.Token, nil, nil)
		Eventually(runStatus(nextID)).WithTimeout(1500 * time.Millisecond).Should(Equal("Completed"))
		AddReportEntry("cancel to the next run completed", time.Since(cancelled).String())
		Expect(time.Since(cancelled)).To(BeNumerically("<", 1500*time.Millisecond))
		Expect(readRun(id).Status).To(Equal("Cancelled"))
	}

	It("abandons a slow model call within a second, and the worker takes the next run", func() {
		oneWorker()
		c := newCrew()
		g := newGate()
		slow := newModelStub(g.answer("too late"))
		next := newModelStub(answering("next one done"))
		busy := seedTeam(c, agentSpec{Primary: newConnection(c, slow.URL+"/v1", key)})
		other := newCrew()
		waiting := seedTeam(other, agentSpec{Primary: newConnection(other, next.URL+"/v1", key)})
		id := busy.enqueue()
		Eventually(func() int { return len(slow.calls()) }).WithTimeout(20 * time.Second).Should(Equal(1))
		nextID := waiting.enqueue()
		Consistently(runStatus(nextID)).WithTimeout(300 * time.Millisecond).Should(Equal("Queued"))

		cancelThenNext(c, id, nextID)
		Expect(logs.String()).To(MatchRegexp(`"msg":"run was cancelled or taken over while it ran"[^\n]*"run_id":"` + id))
	})

	It("abandons a slow tool call within a second, and the worker takes the next run", func() {
		oneWorker()
		c := newCrew()
		server := mcptest.NewAnnotated()
		DeferCleanup(server.Close)
		server.SlowFor = 5 * time.Second
		mcpID := newMCPServer(c, server.URL+"/mcp", "Bearer mcp-secret-slow")
		model := toolModel("never", []stubCall{{Name: mcptest.Slow, Arguments: `{}`}})
		next := newModelStub(answering("next one done"))
		busy := seedTeam(c, agentSpec{Primary: newConnection(c, model.URL+"/v1", key), MCPServers: []string{mcpID}, Autonomy: "Autonomous"})
		other := newCrew()
		waiting := seedTeam(other, agentSpec{Primary: newConnection(other, next.URL+"/v1", key)})
		id := busy.enqueue()
		Eventually(server.Live).WithTimeout(20 * time.Second).Should(Equal(1))
		nextID := waiting.enqueue()

		cancelThenNext(c, id, nextID)
		Expect(model.calls()).To(HaveLen(1))
	})
})

var _ = Describe("sharing the workers between organizations", func() {
	const key = "sk-fair-key-8080"

	It("runs another organization's run at once while one organization's slow runs fill its cap, and then runs every one of those", func() {
		startWorkerWith(func(c *config.Config) {
			c.Runs.WorkerConcurrency = 4
			c.Runs.OrgConcurrency = 2
		})
		a, b := newCrew(), newCrew()
		g := newGate()
		slow := newModelStub(g.answer("slow but done"))
		fast := newModelStub(answering("fast"))
		slowConn := newConnection(a, slow.URL+"/v1", key)
		var queued []string
		for range 6 {
			queued = append(queued, seedTeam(a, agentSpec{Primary: slowConn}).enqueue())
		}
		Eventually(func() int { return len(slow.calls()) }).WithTimeout(20 * time.Second).Should(Equal(2))
		Consistently(func() int { return len(slow.calls()) }).WithTimeout(500 * time.Millisecond).Should(Equal(2))

		started := time.Now()
		id := seedTeam(b, agentSpec{Primary: newConnection(b, fast.URL+"/v1", key)}).enqueue()
		Eventually(runStatus(id)).WithTimeout(1500 * time.Millisecond).Should(Equal("Completed"))
		AddReportEntry("the other organization's run, queued to completed", time.Since(started).String())
		Expect(time.Since(started)).To(BeNumerically("<", 1500*time.Millisecond))

		g.release()
		for _, q := range queued {
			Eventually(runStatus(q)).WithTimeout(20 * time.Second).Should(Equal("Completed"))
			Expect(readRun(q).Attempts).To(Equal(1), "waiting for the organization's slot costs no attempt")
		}
		Expect(slow.calls()).To(HaveLen(6))
	})
})
