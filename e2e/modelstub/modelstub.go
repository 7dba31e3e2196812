// Package modelstub is a tiny OpenAI-compatible chat-completions endpoint for local runs and
// tests: POST {base}/chat/completions answers at once with a token count and either tool calls
// (Script) or a fixed text, so an agent run completes, tools included, without a real model.
// It keeps the last request's messages, the tool results among them, for a reader.
package modelstub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Stub is the handler. Its zero value answers Reply's default at once.
type Stub struct {
	// Reply is the assistant's final answer; empty means DefaultReply.
	Reply string
	// Script are the tool calls the stub asks for before answering Reply. A conversation's
	// turn is how many assistant messages its request already holds: turn k < len(Script) is
	// answered with the calls of Script[k], any later turn with Reply. The stub keeps no state
	// per conversation, so any number of runs may use it at once.
	Script [][]Call

	mu    sync.Mutex
	calls int
	last  []Message
}

// Call is one tool call the stub asks for: a function name the request offered and its
// arguments as a JSON object.
type Call struct {
	Name      string
	Arguments string
}

// DefaultReply is what a Stub without a Reply answers.
const DefaultReply = "QA review: the acceptance criteria are met."

// Message is one chat message of a request; a tool message carries the id of the call it
// answers.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
}

// ToolCall is a tool call of an assistant message.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Calls is how many completions the stub answered.
func (s *Stub) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Last returns the messages of the last request.
func (s *Stub) Last() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.last...)
}

// ToolResults returns the contents of the last request's tool messages, in order.
func (s *Stub) ToolResults() []string {
	var out []string
	for _, m := range s.Last() {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

// ServeHTTP answers POST .../chat/completions; anything else is 404.
func (s *Stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model    string    `json:"model"`
		Messages []Message `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"the body is not a chat completion request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.calls++
	s.last = req.Messages
	s.mu.Unlock()
	turn, prompt := 0, 0
	for _, m := range req.Messages {
		prompt += len(strings.Fields(m.Content))
		if m.Role == "assistant" {
			turn++
		}
	}
	message := map[string]any{"role": "assistant", "content": s.reply()}
	finish := "stop"
	if turn < len(s.Script) {
		calls := make([]any, len(s.Script[turn]))
		for i, c := range s.Script[turn] {
			calls[i] = map[string]any{"id": fmt.Sprintf("call_%d_%d", turn, i), "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		}
		message, finish = map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}, "tool_calls"
	}
	completion := len(strings.Fields(s.reply()))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": message}},
		"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	})
}

func (s *Stub) reply() string {
	if s.Reply == "" {
		return DefaultReply
	}
	return s.Reply
}
