package mcpclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/mcpclient"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/mcpclient/mcptest"
)

func newClient() *mcpclient.Client {
	out := outbound.New(outbound.Options{AllowLoopback: true, Timeout: 5 * time.Second, MaxBodyBytes: 1 << 20})
	return mcpclient.New(out, 10*time.Second, 1<<20, log)
}

func toolNames(tools []connection.Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

var _ = Describe("the MCP client against the reference server (server-everything, event-stream replies)", func() {
	It("negotiates revision 2025-11-25, lists the tools and calls one", func(ctx SpecContext) {
		c := newClient()
		e := connection.Endpoint{ID: "everything", Name: "everything", URL: everythingURL}
		d, err := c.Discover(ctx, e)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.ProtocolVersion).To(Equal("2025-11-25"))
		Expect(toolNames(d.Tools)).To(ContainElements("echo", "get-sum"))
		for _, t := range d.Tools {
			Expect(t.Description).NotTo(BeEmpty(), t.Name)
		}

		text, err := c.CallTool(ctx, e, "echo", map[string]any{"message": "hello from the worker"})
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(ContainSubstring("hello from the worker"))
	})

	It("refuses the server when loopback is not allowed, without connecting", func(ctx SpecContext) {
		c := mcpclient.New(outbound.New(outbound.Options{}), 5*time.Second, 1<<20, log)
		_, err := c.ListTools(ctx, connection.Endpoint{ID: "everything", URL: everythingURL})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		Expect(connection.Reason(err)).To(Equal("The server's address is not allowed."))
	})
})

var _ = Describe("the MCP client against a server that answers JSON", func() {
	It("sends the auth headers, carries the session id, follows nextCursor and calls a tool", func(ctx SpecContext) {
		srv := mcptest.New("s3cret-token")
		DeferCleanup(srv.Close)
		c := newClient()
		e := connection.Endpoint{ID: "json", URL: srv.URL + "/mcp", Headers: map[string]connection.Secret{"Authorization": "Bearer s3cret-token"}}
		d, err := c.Discover(ctx, e)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.ProtocolVersion).To(Equal("2025-11-25"))
		Expect(toolNames(d.Tools)).To(Equal(mcptest.Tools))

		text, err := c.CallTool(ctx, e, "search", map[string]any{"q": "x"})
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(Equal("called search"))

		Expect(srv.Methods()).To(HaveExactElements("initialize", "notifications/initialized", "tools/list", "tools/list",
			"initialize", "notifications/initialized", "tools/call"))
		sessions := srv.Sessions()
		Expect(sessions[0]).To(BeEmpty())
		Expect(sessions[1:4]).To(HaveEach(mcptest.Session))
		Expect(logs.String()).NotTo(ContainSubstring("s3cret-token"))
	})

	It("says the credentials were refused, without quoting the server or the header", func(ctx SpecContext) {
		srv := mcptest.New("right-token")
		DeferCleanup(srv.Close)
		e := connection.Endpoint{ID: "json", URL: srv.URL + "/mcp", Headers: map[string]connection.Secret{"Authorization": "Bearer wrong-token"}}
		_, err := newClient().ListTools(ctx, e)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
		Expect(connection.Reason(err)).To(Equal("The server refused the credentials (HTTP 401)."))
		Expect(logs.String()).To(ContainSubstring("mcp server unusable"))
		Expect(logs.String()).NotTo(ContainSubstring("wrong-token"))
	})

	It("reports an unreachable server as such", func(ctx SpecContext) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		_, err := newClient().ListTools(ctx, connection.Endpoint{ID: "gone", URL: url + "/mcp"})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
		Expect(connection.Reason(err)).To(Equal("The server could not be reached."))
	})
})

var _ = Describe("the MCP client against the SDK's server with annotated tools", func() {
	It("reads each tool's risk from its annotations and keeps its input schema", func(ctx SpecContext) {
		srv := mcptest.NewAnnotated()
		DeferCleanup(srv.Close)
		tools, err := newClient().ListTools(ctx, connection.Endpoint{ID: "annotated", URL: srv.URL + "/mcp"})
		Expect(err).NotTo(HaveOccurred())
		risks := map[string]connection.Risk{}
		for _, t := range tools {
			risks[t.Name] = t.Risk
			Expect(string(t.InputSchema)).To(ContainSubstring(`"page":{"type":"string"}`))
		}
		Expect(risks).To(HaveKeyWithValue(mcptest.ReadPage, connection.RiskLow))
		Expect(risks).To(HaveKeyWithValue(mcptest.PostComment, connection.RiskMedium))
		Expect(risks).To(HaveKeyWithValue(mcptest.DeletePage, connection.RiskHigh))
	})

	It("reports a result marked isError as a failure carrying its text", func(ctx SpecContext) {
		srv := mcptest.NewAnnotated()
		DeferCleanup(srv.Close)
		_, err := newClient().CallTool(ctx, connection.Endpoint{ID: "annotated", URL: srv.URL + "/mcp"}, mcptest.Failing, nil)
		Expect(connection.Reason(err)).To(Equal("The tool reported an error: the wiki is read-only today"))
	})

	It("names the JSON-RPC error a server refused a call with by its code, without quoting the server", func(ctx SpecContext) {
		srv := mcptest.NewAnnotated()
		DeferCleanup(srv.Close)
		_, err := newClient().CallTool(ctx, connection.Endpoint{ID: "annotated", URL: srv.URL + "/mcp"}, "no_such_tool", nil)
		Expect(connection.Reason(err)).To(Equal("The server refused the request (JSON-RPC error -32602, invalid params)."))
	})

	It("lets go of a slow call as soon as its context ends", func() {
		srv := mcptest.NewAnnotated()
		srv.SlowFor = 3 * time.Second
		DeferCleanup(srv.Close)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for srv.Live() == 0 {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
		}()
		start := time.Now()
		_, err := newClient().CallTool(ctx, connection.Endpoint{ID: "annotated", URL: srv.URL + "/mcp"}, mcptest.Slow, nil)
		Expect(err).To(HaveOccurred())
		Expect(time.Since(start)).To(BeNumerically("<", 2*time.Second))
	})
})
