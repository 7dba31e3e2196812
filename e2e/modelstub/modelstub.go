// Package modelstub is a tiny OpenAI-compatible chat-completions endpoint for local runs and
// tests: POST {base}/chat/completions answers at once with a fixed text and a token count, so an
// agent run completes without a real model. It keeps the last request's messages for a reader.
package modelstub

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// Stub is the handler. Its zero value answers Reply's default.
type Stub struct {
	// Reply is the assistant's answer; empty means DefaultReply.
	Reply string

	mu    sync.Mutex
	calls int
	last  []Message
}

// DefaultReply is what a Stub without a Reply answers.
const DefaultReply = "QA review: the acceptance criteria are met."

// Message is one chat message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
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
	reply := s.Reply
	if reply == "" {
		reply = DefaultReply
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(strings.Fields(m.Content))
	}
	completion := len(strings.Fields(reply))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": reply}}},
		"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	})
}
