package runner

import (
	"context"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// transcript is a run's conversation rebuilt from its recorded steps: the messages to send the
// model next, what the limits count, and what is left of the last model answer.
type transcript struct {
	messages []Message
	// models and calls count the recorded model and tool steps.
	models, calls                  int
	promptTokens, completionTokens int
	connectionID                   *string
	// pending are the tool calls of the last model answer, each with its step once recorded.
	pending []pendingCall
	// final is the last model answer's text when it asked for no tool call: the run's output.
	final *string
}

// pendingCall is a tool call of the last model answer and its recorded step (nil before it is
// recorded).
type pendingCall struct {
	call ToolCall
	step *run.Step
}

// transcript loads the run's steps and rebuilds the conversation on the prompt's messages.
func (w *Worker) transcript(ctx context.Context, runID string, p prompt) (transcript, error) {
	steps, err := w.store.Steps(ctx, runID)
	if err != nil {
		return transcript{}, err
	}
	return replay(p, steps), nil
}

// replay rebuilds the conversation from steps in order: each model answer becomes an assistant
// message, and the tool steps that follow it, matched to its calls in order, become the tool
// messages of the calls whose result is recorded. The calls of the last answer are left
// pending with their steps; a model step recorded without its answer (before answers were kept)
// cannot be replayed and is counted but left out with its tool steps.
func replay(p prompt, steps []run.Step) transcript {
	t := transcript{messages: p.Messages()}
	for i := range steps {
		s := &steps[i]
		if s.Kind == run.ToolStep {
			t.calls++
			for j := range t.pending {
				if t.pending[j].step == nil {
					t.pending[j].step = s
					break
				}
			}
			continue
		}
		t.flush(p.fence)
		t.model(*s)
	}
	return t
}

// model takes in a recorded model step: it counts against the limits and, when it succeeded,
// its answer becomes the assistant message with its calls pending, or the final text when it
// asked for none.
func (t *transcript) model(s run.Step) {
	t.models++
	t.promptTokens += s.PromptTokens
	t.completionTokens += s.CompletionTokens
	t.final = nil
	if s.Status != run.CallSucceeded || s.Answer == nil {
		return
	}
	t.connectionID = s.ConnectionID
	if len(s.Answer.ToolCalls) == 0 {
		t.final = &s.Answer.Text
		return
	}
	t.messages = append(t.messages, Message{Role: Assistant, Content: s.Answer.Text, ToolCalls: s.Answer.ToolCalls})
	t.pending = make([]pendingCall, len(s.Answer.ToolCalls))
	for i, c := range s.Answer.ToolCalls {
		t.pending[i].call = c
	}
}

// flush turns the recorded results of the pending calls into tool messages, before the next
// model step of the transcript.
func (t *transcript) flush(fence string) {
	for _, pc := range t.pending {
		if pc.step != nil && run.Answered(pc.step.Status) {
			t.messages = append(t.messages, toolResult(fence, *pc.step))
		}
	}
	t.pending = nil
}

// toolResult is the tool message of a call whose result is recorded.
func toolResult(fence string, s run.Step) Message {
	return Message{Role: ToolRole, ToolCallID: s.CallID, Content: toolMessage(fence, s.FunctionName, s.Status, s.Result)}
}
