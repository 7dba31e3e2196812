package runner

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// Role is a chat message's author.
type Role string

// Chat roles.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	ToolRole  Role = "tool"
)

// Message is one chat message sent to a model: an assistant message carries the tool calls it
// asked for, a tool message the result of one of them (ToolCallID).
type Message struct {
	Role       Role
	Content    string
	ToolCalls  []ToolCall
	ToolCallID string
}

// ToolCall is one call a model asked for: its id, the function name and the arguments as the
// model wrote them (a JSON object, unchecked); the transcript stores it as it is.
type ToolCall = run.ToolCall

// ToolSpec is a tool offered to a model as an OpenAI-format function.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the tool's JSON Schema, as its MCP server gave it.
	Parameters json.RawMessage
}

// Usage counts a completion's tokens.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// Completion is a model's answer: text, or tool calls to make before asking again.
type Completion struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
}

// Model completes a chat over one model connection, once (no retries of its own). An error of
// kind Unavailable or RateLimited is transient (5xx, 429, timeouts, connection errors) and
// worth retrying; any other error (401, 403, another 4xx, a refused address) is final for that
// connection. Error messages are fit for the run's error text.
type Model interface {
	Complete(ctx context.Context, conn connection.OpenedModel, messages []Message, tools []ToolSpec) (Completion, error)
}

// Retry is the backoff of transient model failures on one connection.
type Retry struct {
	// Retries is how many times a transient failure is retried.
	Retries int
	// Base is the first backoff, doubled for each later retry, capped at Max, with full jitter.
	Base time.Duration
	Max  time.Duration
}

// backoff is the delay before retry n (from 0): a random duration up to min(Max, Base*2^n).
func (r Retry) backoff(n int) time.Duration {
	d := r.Max
	if n < 30 && r.Base<<n < r.Max {
		d = r.Base << n
	}
	if d <= 0 {
		return 0
	}
	return rand.N(d) + 1 // #nosec G404 -- retry jitter, not a secret
}

// transient reports whether a model error is worth retrying.
func transient(err error) bool {
	return apperr.Is(err, apperr.Unavailable) || apperr.Is(err, apperr.RateLimited)
}

// answered is a completion and the connection that gave it.
type answered struct {
	Completion
	ConnectionID string
}

// complete asks each connection in turn (the primary, then the fallback), retrying transient
// failures on each with backoff; the first answer wins. It returns the last failure when every
// connection failed.
func (w *Worker) complete(ctx context.Context, conns []connection.OpenedModel, messages []Message, tools []ToolSpec) (answered, error) {
	var last error
	for _, conn := range conns {
		for n := 0; ; n++ {
			c, err := w.model.Complete(ctx, conn, messages, tools)
			if err == nil {
				return answered{Completion: c, ConnectionID: conn.ID}, nil
			}
			last = err
			if !transient(err) || n >= w.cfg.Retry.Retries || ctx.Err() != nil {
				break
			}
			w.log.WarnContext(ctx, "model call failed; retrying", "connection_id", conn.ID, "retry", n+1, "reason", reasonOf(err))
			if err := service.Sleep(ctx, w.cfg.Retry.backoff(n)); err != nil {
				return answered{}, err
			}
		}
		if ctx.Err() != nil {
			break
		}
		w.log.WarnContext(ctx, "model connection failed", "connection_id", conn.ID, "reason", reasonOf(last))
	}
	if last == nil {
		last = errors.New("no model connection")
	}
	return answered{}, last
}
