package connection

import (
	"context"
	"encoding/json"
	"errors"
	"net/textproto"
	"slices"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// Limits of an MCP server's headers.
const (
	HeadersMax     = 20
	HeaderNameMax  = 100
	HeaderValueMax = 8000
)

// reservedHeaders are set by the HTTP client and the MCP transport; a server config may not
// replace them.
var reservedHeaders = []string{
	"Accept", "Connection", "Content-Length", "Content-Type", "Host", "Keep-Alive", "Last-Event-Id",
	"Mcp-Protocol-Version", "Mcp-Session-Id", "Proxy-Authorization", "Proxy-Connection", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "User-Agent",
}

// MCPServer is an MCP server config as clients see it: its header names, never their values.
type MCPServer struct {
	ID             string
	OrganizationID string
	Name           string
	URL            string
	HeaderNames    []string
	CreatedBy      string
	CreatedAt      time.Time
}

// NewMCPServer is what a client gives to register an MCP server.
type NewMCPServer struct {
	OrganizationID string
	Name           string
	URL            string
	Headers        map[string]string
}

// Endpoint is an MCP server opened for a call: its URL and headers in clear.
type Endpoint struct {
	ID      string
	Name    string
	URL     string
	Headers map[string]Secret
}

// Tool is one tool an MCP server lists. Its description is the server's text: untrusted.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the tool's JSON Schema for its arguments, as the server gave it.
	InputSchema json.RawMessage
	// Risk follows the tool's annotations (RiskOf).
	Risk Risk
}

// Risk is how much harm a tool call can do, from the MCP tool annotations.
type Risk string

// Risks.
const (
	RiskLow    Risk = "Low"
	RiskMedium Risk = "Medium"
	RiskHigh   Risk = "High"
)

// RiskOf reads the MCP tool annotations with the defaults the MCP specification gives them
// (readOnlyHint false, destructiveHint true): a read-only tool is Low, a tool that declares
// itself not destructive is Medium, and anything else, a tool without annotations included,
// is High.
func RiskOf(annotated bool, readOnly bool, destructive *bool) Risk {
	switch {
	case annotated && readOnly:
		return RiskLow
	case annotated && destructive != nil && !*destructive:
		return RiskMedium
	default:
		return RiskHigh
	}
}

// ToolLister lists every tool of an MCP server (all pages). Its errors carry a message fit for
// the user (apperr), never a raw response body.
type ToolLister interface {
	ListTools(ctx context.Context, e Endpoint) ([]Tool, error)
}

// TestResult is the answer of a connectivity check.
type TestResult struct {
	Reachable bool
	Tools     []string
	Error     string
}

// CreateMCPServer stores an MCP server config with its headers sealed (ManageApiKeys). It
// returns Invalid for a blank or oversized field, a refused URL or a bad header, and Forbidden.
func (s *Service) CreateMCPServer(ctx context.Context, memberID string, in NewMCPServer) (MCPServer, error) {
	if check.Blank(in.Name) || check.Blank(in.URL) {
		return MCPServer{}, apperr.Invalidf("name and url are required.")
	}
	names, err := headerNames(in.Headers)
	if err != nil {
		return MCPServer{}, err
	}
	var c check.Checker
	c.Text("name", &in.Name, check.NameMax)
	c.Text("url", &in.URL, URLMax)
	s.checkURLOf(&c, "url", in.URL)
	if err := c.First(); err != nil {
		return MCPServer{}, err
	}
	if _, err := s.access.Require(ctx, memberID, access.ManageApiKeys, access.Org(in.OrganizationID)); err != nil {
		return MCPServer{}, err
	}
	m := MCPServer{
		ID: s.newID(), OrganizationID: in.OrganizationID, Name: strings.TrimSpace(in.Name), URL: strings.TrimSpace(in.URL),
		HeaderNames: names, CreatedBy: memberID, CreatedAt: s.now(),
	}
	canonical := make(map[string]string, len(in.Headers))
	for k, v := range in.Headers {
		canonical[textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(k))] = v
	}
	plain, err := json.Marshal(canonical)
	if err != nil {
		return MCPServer{}, err
	}
	sealed, err := s.sealer.Seal(plain, MCPAAD(m.ID))
	if err != nil {
		return MCPServer{}, err
	}
	return m, s.store.CreateMCPServer(ctx, m, sealed, audit.New(m.OrganizationID, memberID, "mcp_server.created", "McpServer", m.ID, m.Name))
}

// headerNames validates the headers and returns their canonical names, sorted.
func headerNames(headers map[string]string) ([]string, error) {
	if len(headers) > HeadersMax {
		return nil, apperr.Invalidf("headers must have at most %d entries.", HeadersMax)
	}
	names := make([]string, 0, len(headers))
	for k, v := range headers {
		name := textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(k))
		switch {
		case !validToken(name) || len(name) > HeaderNameMax:
			return nil, apperr.Invalidf("header names must be HTTP tokens of 1 to %d characters.", HeaderNameMax)
		case slices.Contains(reservedHeaders, name):
			return nil, apperr.Invalidf("header %s is set by the client and cannot be configured.", name)
		case slices.Contains(names, name):
			return nil, apperr.Invalidf("header %s is given twice.", name)
		case strings.ContainsAny(v, "\r\n\x00") || len(v) > HeaderValueMax:
			return nil, apperr.Invalidf("header values must be at most %d characters, without line breaks or NUL bytes.", HeaderValueMax)
		}
		var c check.Checker
		c.Text("header value", &v, HeaderValueMax)
		if err := c.First(); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// validToken reports whether s is an RFC 9110 token.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c > 0x7e || c <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

// MCPServers lists the organization's MCP servers, oldest first (ConfigureAgents).
func (s *Service) MCPServers(ctx context.Context, memberID, organizationID string, p org.Page) ([]MCPServer, error) {
	if _, err := s.access.Require(ctx, memberID, access.ConfigureAgents, access.Org(organizationID)); err != nil {
		return nil, err
	}
	return s.store.MCPServers(ctx, organizationID, p)
}

// DeleteMCPServer deletes an MCP server config (ManageApiKeys on its organization) and returns
// it. Agents that name it keep the id; their runs skip it. It returns MCPServerNotFound and
// Forbidden.
func (s *Service) DeleteMCPServer(ctx context.Context, memberID, id string) (MCPServer, error) {
	m, _, err := s.store.MCPServer(ctx, id)
	if err != nil {
		return MCPServer{}, err
	}
	if _, err := s.access.Require(ctx, memberID, access.ManageApiKeys, access.Org(m.OrganizationID)); err != nil {
		return MCPServer{}, err
	}
	return m, s.store.DeleteMCPServer(ctx, id, audit.New(m.OrganizationID, memberID, "mcp_server.deleted", "McpServer", m.ID, m.Name))
}

// TestMCPServer connects to the server and lists its tools (ManageApiKeys). An unreachable
// or failing server is a successful answer with Reachable false and a short reason. It returns
// MCPServerNotFound and Forbidden.
func (s *Service) TestMCPServer(ctx context.Context, memberID, id string) (TestResult, error) {
	m, _, err := s.store.MCPServer(ctx, id)
	if err != nil {
		return TestResult{}, err
	}
	if _, err := s.access.Require(ctx, memberID, access.ManageApiKeys, access.Org(m.OrganizationID)); err != nil {
		return TestResult{}, err
	}
	e, err := s.OpenMCPServer(ctx, m.OrganizationID, id)
	if err != nil {
		return TestResult{}, err
	}
	tools, err := s.tools.ListTools(ctx, e)
	if err != nil {
		return TestResult{Tools: []string{}, Error: Reason(err)}, nil
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return TestResult{Reachable: true, Tools: names}, nil
}

// MCPServerOrganization returns the organization of the MCP server id names, or "" when it
// names none.
func (s *Service) MCPServerOrganization(ctx context.Context, id string) (string, error) {
	return ownerOf(ctx, s.store.MCPServer, id)
}

// OpenMCPServer returns the organization's server with its headers in clear, for a call
// (openOwn). It returns MCPServerNotFound, and Internal when the headers do not open.
func (s *Service) OpenMCPServer(ctx context.Context, organizationID, id string) (Endpoint, error) {
	m, plain, err := openOwn(ctx, s.sealer, s.store.MCPServer, organizationID, id)
	if err != nil {
		return Endpoint{}, err
	}
	var headers map[string]Secret
	if err := json.Unmarshal(plain, &headers); err != nil {
		return Endpoint{}, m.unusable(err)
	}
	return Endpoint{ID: m.ID, Name: m.Name, URL: m.URL, Headers: headers}, nil
}

func (m MCPServer) owner() string { return m.OrganizationID }
func (m MCPServer) aad() []byte   { return MCPAAD(m.ID) }
func (MCPServer) notFound() error { return MCPServerNotFound() }
func (MCPServer) unusable(cause error) error {
	return apperr.Wrap(cause, apperr.Internal, "mcp_server_unusable", "The MCP server's headers cannot be opened.")
}

// Reason is the user-facing reason of an outbound failure: the apperr message, never the
// cause's text (which may quote a response).
func Reason(err error) string {
	var e *apperr.Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return "The server could not be reached."
}

// MCPAAD is the associated data an MCP server's sealed headers are bound to.
func MCPAAD(id string) []byte { return []byte("mcp_server:" + id) }

// MCPServerNotFound answers an unknown MCP server id.
func MCPServerNotFound() error {
	return apperr.E(apperr.NotFound, "mcp_server_not_found", "MCP server not found.")
}
