// Package mcpclient is agent-team's MCP client: the official Go SDK over the streamable HTTP
// transport, asking for protocol revision 2025-11-25 (initialize, the initialized
// notification, tools/list through every nextCursor page, tools/call; the SDK carries the
// Mcp-Session-Id header and reads both JSON and event-stream replies). Requests go through the
// SSRF-safe client of pkg/outbound, which caps every response; the server's authentication
// headers are added by a transport wrapped around it. Failures are apperr Unavailable (or
// Invalid for a refused address) with a short message for the user, never the server's body.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
)

// ProtocolVersion is the MCP revision the client asks for.
const ProtocolVersion = "2025-11-25"

// Limits of one listing.
const (
	maxPages = 50
	maxTools = 500
)

// Client opens short MCP sessions. It is safe for concurrent use.
type Client struct {
	http     *http.Client
	timeout  time.Duration
	maxEvent int
	log      *slog.Logger
	impl     *mcp.Implementation
}

// New returns a Client sending through out, bounding each session by timeout and each
// server-sent event by maxEvent bytes.
func New(out *outbound.Client, timeout time.Duration, maxEvent int64, log *slog.Logger) *Client {
	return &Client{
		http: out.HTTPClient(), timeout: timeout, maxEvent: int(maxEvent), log: log,
		impl: &mcp.Implementation{Name: "motionstudio-agentteam", Version: "1.0.0"},
	}
}

// Discovery is what a session learned about a server.
type Discovery struct {
	ProtocolVersion string
	Tools           []connection.Tool
}

// ListTools lists every tool of the server (connection.ToolLister).
func (c *Client) ListTools(ctx context.Context, e connection.Endpoint) ([]connection.Tool, error) {
	d, err := c.Discover(ctx, e)
	return d.Tools, err
}

// Discover opens a session, lists the tools through every page, and closes the session. It
// returns the revision the server agreed to and the tools.
func (c *Client) Discover(ctx context.Context, e connection.Endpoint) (Discovery, error) {
	var d Discovery
	err := c.session(ctx, e, func(ctx context.Context, cs *mcp.ClientSession) error {
		d.ProtocolVersion = cs.InitializeResult().ProtocolVersion
		params := &mcp.ListToolsParams{}
		for page := 0; page < maxPages; page++ {
			res, err := cs.ListTools(ctx, params)
			if err != nil {
				return err
			}
			for _, t := range res.Tools {
				if len(d.Tools) < maxTools {
					d.Tools = append(d.Tools, toolOf(t))
				}
			}
			if res.NextCursor == "" || len(d.Tools) >= maxTools {
				return nil
			}
			params = &mcp.ListToolsParams{Cursor: res.NextCursor}
		}
		return nil
	})
	if err != nil {
		return Discovery{}, err
	}
	return d, nil
}

// toolOf is the SDK's tool as the platform keeps it: its input schema as given (an object
// schema without properties when the server gave none) and its risk from its annotations.
func toolOf(t *mcp.Tool) connection.Tool {
	out := connection.Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil && string(b) != "null" {
			out.InputSchema = b
		}
	}
	if a := t.Annotations; a != nil {
		out.Risk = connection.RiskOf(true, a.ReadOnlyHint, a.DestructiveHint)
	} else {
		out.Risk = connection.RiskOf(false, false, nil)
	}
	return out
}

// CallTool calls one tool with arguments and returns the text of its content. A result the
// server marks as an error is returned as an Unavailable error carrying that text.
func (c *Client) CallTool(ctx context.Context, e connection.Endpoint, name string, args map[string]any) (string, error) {
	var text string
	err := c.session(ctx, e, func(ctx context.Context, cs *mcp.ClientSession) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return err
		}
		var parts []string
		for _, content := range res.Content {
			if t, ok := content.(*mcp.TextContent); ok {
				parts = append(parts, t.Text)
			}
		}
		text = strings.Join(parts, "\n")
		if res.IsError {
			return apperr.E(apperr.Unavailable, "mcp_tool_error", "The tool reported an error: "+text)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return text, nil
}

// session connects to the server, runs fn, and closes the session (the SDK ends it with a
// DELETE carrying its Mcp-Session-Id). When ctx ends first (a cancelled run, a run's time
// limit) it returns at once and leaves the exchange to end in the background within the
// session's timeout: the SDK may wait on the server before it lets go. fn's results may be
// read only when session returns nil. The session's context is cancelled only after the select:
// were the exchange to cancel it as it ends, a caller reaching the select late would find both
// cases ready and could report a completed exchange as failed.
func (c *Client) session(ctx context.Context, e connection.Endpoint, fn func(context.Context, *mcp.ClientSession) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.exchange(ctx, e, fn) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return c.fail(ctx, e, "call", ctx.Err(), &recorder{})
	}
}

// exchange is session's work: connect, fn, close.
func (c *Client) exchange(ctx context.Context, e connection.Endpoint, fn func(context.Context, *mcp.ClientSession) error) error {
	rec := &recorder{}
	transport := &mcp.StreamableClientTransport{
		Endpoint: e.URL,
		HTTPClient: &http.Client{
			Transport:     &headerTransport{next: c.http.Transport, headers: e.Headers, rec: rec},
			Timeout:       c.http.Timeout,
			CheckRedirect: c.http.CheckRedirect,
		},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
		MaxEventSize:         c.maxEvent,
	}
	client := mcp.NewClient(c.impl, nil)
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		return c.fail(ctx, e, "connect", err, rec)
	}
	defer func() { _ = cs.Close() }()
	c.log.DebugContext(ctx, "mcp session", "mcp_server_id", e.ID, "protocol_version", cs.InitializeResult().ProtocolVersion)
	if err := fn(ctx, cs); err != nil {
		return c.fail(ctx, e, "call", err, rec)
	}
	return nil
}

// fail logs the failure (server id and reason, never headers) and maps it to an apperr with a
// message for the user.
func (c *Client) fail(ctx context.Context, e connection.Endpoint, stage string, err error, rec *recorder) error {
	out := classify(err, rec.status.Load())
	c.log.WarnContext(ctx, "mcp server unusable", "mcp_server_id", e.ID, "stage", stage, "reason", connection.Reason(out))
	return out
}

func classify(err error, status int32) error {
	var ae *apperr.Error
	var netErr net.Error
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &ae):
		return err
	case errors.Is(err, outbound.ErrRefusedDestination):
		return apperr.Wrap(err, apperr.Invalid, "refused_destination", "The server's address is not allowed.")
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return apperr.Wrap(err, apperr.Unavailable, "mcp_unauthorized", fmt.Sprintf("The server refused the credentials (HTTP %d).", status))
	case status >= 300:
		return apperr.Wrap(err, apperr.Unavailable, "mcp_http_error", fmt.Sprintf("The server answered HTTP %d.", status))
	case errors.Is(err, outbound.ErrBodyTooLarge):
		return apperr.Wrap(err, apperr.Unavailable, "mcp_too_large", "The server's answer is larger than the limit.")
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return apperr.Wrap(err, apperr.Unavailable, "mcp_timeout", "The server did not answer in time.")
	case errors.As(err, &netErr):
		return apperr.Wrap(err, apperr.Unavailable, "mcp_unreachable", "The server could not be reached.")
	case errors.As(err, &rpcErr):
		return apperr.Wrap(err, apperr.Unavailable, "mcp_refused", fmt.Sprintf("The server refused the request (JSON-RPC error %d%s).", rpcErr.Code, rpcNames[rpcErr.Code]))
	case errors.Is(err, mcp.ErrConnectionClosed):
		return apperr.Wrap(err, apperr.Unavailable, "mcp_closed", "The session closed before the server answered.")
	default:
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return apperr.Wrap(err, apperr.Unavailable, "mcp_protocol", "The server did not answer as an MCP server.")
		}
		return apperr.Wrap(err, apperr.Unavailable, "mcp_protocol", "The server did not complete the MCP exchange.")
	}
}

// rpcNames name JSON-RPC's standard error codes; a server's own codes are given as numbers,
// and its message is never quoted.
var rpcNames = map[int64]string{
	jsonrpc.CodeParseError:     ", parse error",
	jsonrpc.CodeInvalidRequest: ", invalid request",
	jsonrpc.CodeMethodNotFound: ", method not found",
	jsonrpc.CodeInvalidParams:  ", invalid params",
	jsonrpc.CodeInternalError:  ", internal error",
}

// recorder keeps the last error status the server answered.
type recorder struct{ status atomic.Int32 }

// headerTransport adds the server's authentication headers to every request and records
// error statuses.
type headerTransport struct {
	next    http.RoundTripper
	headers map[string]connection.Secret
	rec     *recorder
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v.Reveal())
		}
	}
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp.StatusCode >= 300 {
		t.rec.status.Store(int32(resp.StatusCode)) // #nosec G115 -- net/http parses status codes as three digits
	}
	return resp, err
}
