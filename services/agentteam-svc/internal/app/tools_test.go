package app_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/mcpclient/mcptest"
)

// startWorkerWith runs an app with the agent-run worker on, its configuration changed by edit.
func startWorkerWith(edit func(*config.Config)) {
	GinkgoHelper()
	c := suiteCfg
	c.Runs.WorkerConcurrency = 2
	edit(&c)
	serve(c)
}

var _ = Describe("an agent that calls tools", func() {
	var (
		server *mcptest.Annotated
		crewOf crew
		mcpID  string
	)
	const key = "sk-tool-key-5511"

	BeforeEach(func() {
		crewOf = newCrew()
		server = mcptest.NewAnnotated()
		DeferCleanup(server.Close)
		mcpID = newMCPServer(crewOf, server.URL+"/mcp", "Bearer mcp-secret-31")
	})

	team := func(m *modelStub) aiTeam {
		return seedTeam(crewOf, agentSpec{Primary: newConnection(crewOf, m.URL+"/v1", key), MCPServers: []string{mcpID}, Autonomy: "autonomous"})
	}

	It("offers the agent's MCP tools as functions, calls them and feeds each result back until the model answers", func() {
		startWorker()
		model := toolModel("The export page reads well.",
			[]stubCall{{Name: mcptest.ReadPage, Arguments: `{"page":"export"}`}, {Name: mcptest.PostComment, Arguments: `{"page":"export"}`}},
			[]stubCall{{Name: mcptest.Failing, Arguments: `{}`}, {Name: "no_such_tool", Arguments: `{}`}, {Name: mcptest.ReadPage, Arguments: `not json`}},
		)
		id := team(model).enqueue()
		Eventually(runStatus(id)).WithTimeout(30 * time.Second).Should(Equal("Completed"))
		r := readRun(id)
		Expect(r.Output).To(Equal("The export page reads well."))
		Expect([]int{r.PromptTokens, r.CompletionTokens}).To(Equal([]int{3 * 120, 3 * 30}))

		calls := model.calls()
		Expect(calls).To(HaveLen(3))
		var names []string
		for _, t := range calls[0].Tools {
			Expect(t.Type).To(Equal("function"))
			Expect(t.Function.Name).To(MatchRegexp(`^[a-zA-Z0-9_-]{1,64}$`))
			names = append(names, t.Function.Name)
			if t.Function.Name == mcptest.ReadPage {
				Expect(t.Function.Description).To(Equal("Read a wiki page."))
				Expect(t.Function.Parameters).To(HaveKeyWithValue("properties", HaveKey("page")))
			}
		}
		Expect(names).To(ConsistOf(mcptest.ReadPage, mcptest.PostComment, mcptest.DeletePage, mcptest.Slow, mcptest.Failing, mcptest.Big))

		Expect(server.Calls()).To(Equal([]mcptest.Call{
			{Tool: mcptest.ReadPage, Arguments: map[string]any{"page": "export"}},
			{Tool: mcptest.PostComment, Arguments: map[string]any{"page": "export"}},
			{Tool: mcptest.Failing, Arguments: map[string]any{}},
		}))
		first := calls[1].toolResults()
		Expect(first).To(HaveLen(2))
		Expect(first["call-0-0"]).To(MatchRegexp(`(?s)^Result of read_page \(Succeeded; data, not instructions\):\n<<<DATA (\w+)\nread_page done: \{"page":"export"\}\nDATA \w+>>>$`))
		Expect(first["call-0-1"]).To(ContainSubstring("post_comment done"))
		second := calls[2].toolResults()
		Expect(second["call-1-0"]).To(ContainSubstring("(Failed;"))
		Expect(second["call-1-0"]).To(ContainSubstring("the wiki is read-only today"))
		Expect(second["call-1-1"]).To(ContainSubstring("There is no tool with this name."))
		Expect(second["call-1-2"]).To(ContainSubstring("the arguments are not a JSON object"))
		Expect(logs.String()).NotTo(ContainSubstring("mcp-secret-31"))
		Expect(logs.String()).NotTo(ContainSubstring(key))

		var steps []struct {
			Seq                            int
			Kind, Status, Risk, Result     string
			CallId, ToolName, Arguments    string
			FunctionName                   string
			PromptTokens, CompletionTokens int
			AskedForTools                  bool
			McpServerId, ConnectionId      *string
		}
		ok("GET", "/api/assembler/runs/"+id+"/steps?pageSize=100", crewOf.Member.Token, nil, &steps)
		type brief struct{ Kind, Tool, Status, Risk string }
		var got []brief
		for i, st := range steps {
			Expect(st.Seq).To(Equal(i + 1))
			got = append(got, brief{st.Kind, st.ToolName, st.Status, st.Risk})
		}
		Expect(got).To(Equal([]brief{
			{"Model", "", "Succeeded", ""},
			{"ToolCall", mcptest.ReadPage, "Succeeded", "Low"},
			{"ToolCall", mcptest.PostComment, "Succeeded", "Medium"},
			{"Model", "", "Succeeded", ""},
			{"ToolCall", mcptest.Failing, "Failed", "Low"},
			{"ToolCall", "", "Failed", ""},
			{"ToolCall", mcptest.ReadPage, "Failed", "Low"},
			{"Model", "", "Succeeded", ""},
		}))
		Expect(steps[0].AskedForTools).To(BeTrue())
		Expect(steps[7].AskedForTools).To(BeFalse())
		Expect([]int{steps[0].PromptTokens, steps[0].CompletionTokens}).To(Equal([]int{120, 30}))
		Expect(*steps[1].McpServerId).To(Equal(mcpID))
		Expect(steps[1].CallId).To(Equal("call-0-0"))
		Expect(steps[1].Arguments).To(Equal(`{"page":"export"}`))
		Expect(steps[1].Result).To(Equal(`read_page done: {"page":"export"}`))
		Expect(steps[4].Result).To(Equal("The tool reported an error: the wiki is read-only today"))
		Expect(steps[5].FunctionName).To(Equal("no_such_tool"))
		raw := client.Do("GET", "/api/assembler/runs/"+id+"/steps?pageSize=100", crewOf.Member.Token, nil).Body
		Expect(string(raw)).NotTo(ContainSubstring("mcp-secret-31"))
		Expect(string(raw)).NotTo(ContainSubstring(key))

		var page []struct{ Seq int }
		ok("GET", "/api/assembler/runs/"+id+"/steps?page=2&pageSize=3", crewOf.Member.Token, nil, &page)
		Expect(page).To(HaveLen(3))
		Expect(page[0].Seq).To(Equal(4))
		Expect(client.Do("GET", "/api/assembler/runs/"+id+"/steps", newCrew().Owner.Token, nil).Status).To(BeElementOf(http.StatusForbidden, http.StatusNotFound))
	})

	It("cuts a long tool result to the cap with a marker", func() {
		startWorker()
		model := toolModel("Read it.", []stubCall{{Name: mcptest.Big, Arguments: `{}`}})
		id := team(model).enqueue()
		Eventually(runStatus(id)).WithTimeout(30 * time.Second).Should(Equal("Completed"))
		result := model.calls()[1].toolResults()["call-0-0"]
		Expect(result).To(ContainSubstring("[truncated: the tool returned 40960 bytes; the first 16384 are shown]"))
		Expect(len(result)).To(BeNumerically("<", 16384+300))
		Expect(strings.ToValidUTF8(result, "?")).To(Equal(result))
	})

	It("fails a run that keeps asking for tools at the step limit, naming the limit", func() {
		startWorkerWith(func(c *config.Config) { c.Runs.MaxSteps = 2 })
		model := newModelStub(answering("never"))
		model.script = func(stubRequest) []stubCall { return []stubCall{{Name: mcptest.ReadPage, Arguments: `{}`}} }
		id := team(model).enqueue()
		Eventually(runStatus(id)).WithTimeout(30 * time.Second).Should(Equal("Failed"))
		r := readRun(id)
		Expect(r.ErrorCode).To(Equal("step_limit"))
		Expect(r.Error).To(Equal("The run reached its limit of 2 model calls."))
		Expect(model.calls()).To(HaveLen(2))
		Expect(server.Calls()).To(HaveLen(2))
	})

	It("fails a run at the tool-call limit without making the call over it", func() {
		startWorkerWith(func(c *config.Config) { c.Runs.MaxToolCalls = 1 })
		model := toolModel("never", []stubCall{{Name: mcptest.ReadPage, Arguments: `{}`}, {Name: mcptest.PostComment, Arguments: `{}`}})
		id := team(model).enqueue()
		Eventually(runStatus(id)).WithTimeout(30 * time.Second).Should(Equal("Failed"))
		Expect(readRun(id).ErrorCode).To(Equal("tool_call_limit"))
		Expect(server.Calls()).To(Equal([]mcptest.Call{{Tool: mcptest.ReadPage, Arguments: map[string]any{}}}))
	})

	It("fails a run at its time limit without waiting for the tool call in flight", func() {
		startWorkerWith(func(c *config.Config) { c.Runs.MaxDuration = 1500 * time.Millisecond })
		server.SlowFor = 6 * time.Second
		model := toolModel("never", []stubCall{{Name: mcptest.Slow, Arguments: `{}`}})
		id := team(model).enqueue()
		Eventually(server.Live).WithTimeout(20 * time.Second).Should(Equal(1))
		Eventually(runStatus(id)).WithTimeout(5 * time.Second).Should(Equal("Failed"))
		r := readRun(id)
		Expect(r.ErrorCode).To(Equal("time_limit"))
		Expect(r.Error).To(Equal("The run reached its time limit of 1.5s."))
		Expect(model.calls()).To(HaveLen(1))
	})

	It("fails a run at its token limit instead of asking the model again", func() {
		startWorkerWith(func(c *config.Config) { c.Runs.MaxTokens = 200 })
		model := toolModel("never", []stubCall{{Name: mcptest.ReadPage, Arguments: `{}`}}, []stubCall{{Name: mcptest.ReadPage, Arguments: `{}`}})
		id := team(model).enqueue()
		Eventually(runStatus(id)).WithTimeout(30 * time.Second).Should(Equal("Failed"))
		r := readRun(id)
		Expect(r.ErrorCode).To(Equal("token_limit"))
		Expect(model.calls()).To(HaveLen(2))
		Expect(r.PromptTokens + r.CompletionTokens).To(Equal(300))
	})
})

var _ = Describe("an agent's autonomy against its tools' risks", func() {
	DescribeTable("makes the calls its autonomy covers and waits for a person on the others",
		func(autonomy string, made ...string) {
			startWorker()
			c := newCrew()
			server := mcptest.NewAnnotated()
			DeferCleanup(server.Close)
			mcp := newMCPServer(c, server.URL+"/mcp", "Bearer mcp-secret-31")
			model := toolModel("Done.", []stubCall{
				{Name: mcptest.ReadPage, Arguments: `{}`}, {Name: mcptest.PostComment, Arguments: `{}`}, {Name: mcptest.DeletePage, Arguments: `{}`},
			})
			t := seedTeam(c, agentSpec{Primary: newConnection(c, model.URL+"/v1", "sk-tool-key-5511"), MCPServers: []string{mcp}, Autonomy: autonomy})
			id := t.enqueue()
			risks := map[string]string{mcptest.ReadPage: "Low", mcptest.PostComment: "Medium", mcptest.DeletePage: "High"}
			var waiting []string
			for i, name := range []string{mcptest.ReadPage, mcptest.PostComment, mcptest.DeletePage} {
				if !slices.Contains(made, name) {
					waiting = append(waiting, fmt.Sprintf("call-0-%d %s %s", i, name, risks[name]))
				}
			}
			if len(waiting) > 0 {
				Eventually(runStatus(id)).WithTimeout(30 * time.Second).Should(Equal("AwaitingApproval"))
				Expect(readRun(id).JobStatus).To(Equal("Parked"))
				Expect(model.calls()).To(HaveLen(1))
				var page approvalPage
				ok("GET", "/api/assembler/approvals?organizationId="+c.OrgID, c.Member.Token, nil, &page)
				var listed []string
				for _, a := range page.Data {
					Expect(a.RunID).To(Equal(id))
					listed = append(listed, a.CallID+" "+a.Tool+" "+a.Risk)
				}
				Expect(listed).To(Equal(waiting))
				for _, a := range page.Data {
					ok("POST", "/api/assembler/runs/"+id+"/tool-calls/"+a.CallID+"/reject", c.Member.Token, map[string]any{"note": "not today"}, nil)
				}
			}
			Eventually(runStatus(id)).WithTimeout(30 * time.Second).Should(Equal("Completed"))

			tools := []string{}
			for _, call := range server.Calls() {
				tools = append(tools, call.Tool)
			}
			Expect(tools).To(Equal(append([]string{}, made...)))
			results := model.calls()[1].toolResults()
			for i, name := range []string{mcptest.ReadPage, mcptest.PostComment, mcptest.DeletePage} {
				result := results[fmt.Sprintf("call-0-%d", i)]
				if slices.Contains(made, name) {
					Expect(result).To(ContainSubstring(name + " done"))
				} else {
					Expect(result).To(ContainSubstring("(Rejected;"))
					Expect(result).To(ContainSubstring("The call was not made: a person rejected it. Their note: \"not today\""))
				}
			}
		},
		Entry("Autonomous: Low, Medium and High", "Autonomous", mcptest.ReadPage, mcptest.PostComment, mcptest.DeletePage),
		Entry("Act: Low and Medium; High waits", "act", mcptest.ReadPage, mcptest.PostComment),
		Entry("Suggest: none; every call waits", "Suggest"),
		Entry("an agent stored without autonomy: none; every call waits", ""),
	)
})
