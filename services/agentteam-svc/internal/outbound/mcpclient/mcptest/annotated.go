package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Annotated tool names and the risk their annotations give them.
const (
	ReadPage    = "read_page"    // readOnlyHint true: Low
	PostComment = "post_comment" // readOnlyHint false, destructiveHint false: Medium
	DeletePage  = "delete_page"  // no annotations: High
	Slow        = "slow_search"  // read-only; answers after SlowFor or when the call is abandoned
	Failing     = "failing"      // read-only; its result is marked isError
	Big         = "big_page"     // read-only; answers BigSize bytes
)

// BigSize is the length of the big_page tool's result.
const BigSize = 40 << 10

// Call is one tools/call the Annotated server answered.
type Call struct {
	Tool      string
	Arguments map[string]any
}

// Annotated is an MCP server built with the official Go SDK (streamable HTTP on 127.0.0.1,
// endpoint URL + "/mcp") whose tools carry the annotations of each risk. Each tool answers
// "<tool> done: <arguments as JSON>" and every call is recorded.
type Annotated struct {
	*httptest.Server
	// SlowFor is how long slow_search takes (30 s unless set before the call).
	SlowFor time.Duration

	mu    sync.Mutex
	calls []Call
	live  int
}

// NewAnnotated starts an Annotated server.
func NewAnnotated() *Annotated {
	s := &Annotated{SlowFor: 30 * time.Second}
	server := mcp.NewServer(&mcp.Implementation{Name: "annotated", Version: "1"}, nil)
	no, schema := false, map[string]any{"type": "object", "properties": map[string]any{"page": map[string]any{"type": "string"}}}
	add := func(name, description string, a *mcp.ToolAnnotations) {
		server.AddTool(&mcp.Tool{Name: name, Description: description, InputSchema: schema, Annotations: a}, s.handle)
	}
	add(ReadPage, "Read a wiki page.", &mcp.ToolAnnotations{ReadOnlyHint: true})
	add(PostComment, "Post a comment on a page.", &mcp.ToolAnnotations{DestructiveHint: &no})
	add(DeletePage, "Delete a page.", nil)
	add(Slow, "Search slowly.", &mcp.ToolAnnotations{ReadOnlyHint: true})
	add(Failing, "Always fails.", &mcp.ToolAnnotations{ReadOnlyHint: true})
	add(Big, "Read a very long page.", &mcp.ToolAnnotations{ReadOnlyHint: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	s.Server = httptest.NewServer(mux)
	return s
}

// Calls are the tool calls answered or started, in order.
func (s *Annotated) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Live is how many tool calls are in progress.
func (s *Annotated) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

func (s *Annotated) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := map[string]any{}
	_ = json.Unmarshal(req.Params.Arguments, &args)
	s.mu.Lock()
	s.calls = append(s.calls, Call{Tool: req.Params.Name, Arguments: args})
	s.live++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.live--
		s.mu.Unlock()
	}()
	text := req.Params.Name + " done: " + string(req.Params.Arguments)
	switch req.Params.Name {
	case Slow:
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(s.SlowFor):
		}
	case Failing:
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the wiki is read-only today"}}}, nil
	case Big:
		text = strings.Repeat("é", BigSize/2)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
}
