package runner

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

var _ = Describe("rebuilding a run's conversation from its transcript", func() {
	p := prompt{system: "rules", user: "task", fence: "F"}
	conn := "conn-1"
	model := func(text string, calls ...ToolCall) run.Step {
		return run.Step{Kind: run.ModelStep, Status: run.CallSucceeded, ConnectionID: &conn, PromptTokens: 100, CompletionTokens: 10,
			AskedForTools: len(calls) > 0, Answer: &run.Answer{Text: text, ToolCalls: calls}}
	}
	tool := func(id, status, result string) run.Step {
		return run.Step{Kind: run.ToolStep, CallID: id, FunctionName: "f_" + id, Status: status, Result: result}
	}
	roles := func(ms []Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, string(m.Role)+" "+m.ToolCallID)
		}
		return out
	}

	It("replays each answer and the recorded results of its calls, and leaves the last answer's calls pending", func() {
		t := replay(p, []run.Step{
			model("", ToolCall{ID: "a", Name: "f_a"}, ToolCall{ID: "b", Name: "f_b"}),
			tool("a", run.CallSucceeded, "A done"),
			tool("b", run.CallRejected, "refused"),
			model("thinking", ToolCall{ID: "c", Name: "f_c"}, ToolCall{ID: "d", Name: "f_d"}, ToolCall{ID: "e", Name: "f_e"}),
			tool("c", run.CallRunning, ""),
			tool("d", run.CallAwaitingApproval, ""),
		})
		Expect(roles(t.messages)).To(Equal([]string{"system ", "user ", "assistant ", "tool a", "tool b", "assistant "}))
		Expect(t.messages[3].Content).To(Equal(toolMessage("F", "f_a", run.CallSucceeded, "A done")))
		Expect(t.messages[5].ToolCalls).To(HaveLen(3))
		Expect([]int{t.models, t.calls, t.promptTokens, t.completionTokens}).To(Equal([]int{2, 4, 200, 20}))
		Expect(t.final).To(BeNil())
		Expect(t.pending).To(HaveLen(3))
		Expect(t.pending[0].step.Status).To(Equal(run.CallRunning))
		Expect(t.pending[1].step.Status).To(Equal(run.CallAwaitingApproval))
		Expect(t.pending[2].call.ID).To(Equal("e"))
		Expect(t.pending[2].step).To(BeNil())
	})

	It("takes a last answer without calls as the run's output, so the model is not asked again", func() {
		t := replay(p, []run.Step{model("", ToolCall{ID: "a"}), tool("a", run.CallSucceeded, "ok"), model("All done.")})
		Expect(*t.final).To(Equal("All done."))
		Expect(t.pending).To(BeEmpty())
		Expect(*t.connectionID).To(Equal(conn))
	})

	It("counts a failed model call and a step recorded without its answer, and replays neither", func() {
		failed := run.Step{Kind: run.ModelStep, Status: run.CallFailed, Result: "The model call failed."}
		old := model("")
		old.Answer, old.AskedForTools = nil, true
		t := replay(p, []run.Step{old, tool("x", run.CallSucceeded, "orphan"), failed})
		Expect(roles(t.messages)).To(Equal([]string{"system ", "user "}))
		Expect([]int{t.models, t.calls}).To(Equal([]int{2, 1}))
		Expect(t.final).To(BeNil())
		Expect(t.pending).To(BeEmpty())
	})
})
