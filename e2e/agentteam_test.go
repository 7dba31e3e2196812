package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/e2e/modelstub"
)

var _ = Describe("a task on an agent team", func() {
	It("goes from creation through Done to a completed QA run that calls a tool, against a local model and MCP server", func() {
		slug := "team-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
		admin("create-tenant", "-slug", slug, "-name", "Team "+slug, "-email", "ops@"+slug+".test")
		admin("create-user", "-tenant", slug, "-email", "ada@"+slug+".test", "-password", "correct horse battery", "-name", "Ada")
		token := admin("token", "-tenant", slug, "-email", "ada@"+slug+".test")["access_token"].(string)

		stub := &modelstub.Stub{
			Reply:  "QA: export works in every format.",
			Script: [][]modelstub.Call{{{Name: "acceptance_criteria", Arguments: `{"feature":"export"}`}}},
		}
		model := httptest.NewServer(stub)
		DeferCleanup(model.Close)
		tools := criteriaServer()
		DeferCleanup(tools.Close)

		// do sends a JSON request to agentteam-svc and decodes a 200 answer into out.
		do := func(method, path string, body, out any) {
			GinkgoHelper()
			raw, err := json.Marshal(body)
			Expect(err).NotTo(HaveOccurred())
			if body == nil {
				raw = nil
			}
			code, _, answer := call(method, p.AgentteamURL+path, token, bytes.NewReader(raw), "Content-Type", "application/json")
			Expect(code).To(Equal(http.StatusOK), "%s %s: %s", method, path, answer)
			if out != nil {
				Expect(json.Unmarshal(answer, out)).To(Succeed())
			}
		}
		type record struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Output string `json:"output"`
			Type   string `json:"type"`
		}

		orgID := uuid.NewString()
		do("POST", "/api/orgboard/organizations", map[string]any{"organizationId": orgID, "name": "Lumen Labs"}, nil)
		var conn, team, seat, task record
		do("POST", "/api/orgboard/model-connections", map[string]any{
			"organizationId": orgID, "name": "Local stub", "baseUrl": model.URL + "/v1", "model": "stub", "apiKey": "sk-local-stub-key",
		}, &conn)
		var wiki record
		do("POST", "/api/orgboard/mcp-servers", map[string]any{
			"organizationId": orgID, "name": "Criteria", "url": tools.URL + "/mcp", "headers": map[string]string{"authorization": "Bearer e2e-mcp-token"},
		}, &wiki)
		do("POST", "/api/orgboard/teams", map[string]any{"organizationId": orgID, "name": "Editors"}, &team)
		do("POST", "/api/orgboard/seats", map[string]any{"teamId": team.ID, "roleName": "QA"}, &seat)
		do("POST", "/api/orgboard/seats/"+seat.ID+"/agent", map[string]any{
			"name": "Quinn", "monogram": "QN", "autonomy": "Act", "apiConfigId": conn.ID, "mcpServerIds": []string{wiki.ID},
			"skillKeys": []string{}, "docs": []string{}, "persona": "Check every acceptance criterion.",
		}, nil)
		do("POST", "/api/orgboard/tasks", map[string]any{
			"teamId": team.ID, "title": "Export to MP4", "description": "Users export a project as MP4.", "type": "Feature",
		}, &task)
		do("PATCH", "/api/orgboard/tasks/"+task.ID+"/move", map[string]any{"status": "InProgress"}, nil)
		do("PATCH", "/api/orgboard/tasks/"+task.ID+"/move", map[string]any{"status": "Done"}, nil)

		var runs []record
		Eventually(func() string {
			do("GET", "/api/assembler/runs?seatId="+seat.ID, nil, &runs)
			if len(runs) != 1 {
				return ""
			}
			return runs[0].Status
		}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal("Completed"))
		Expect(runs[0].Output).To(Equal("QA: export works in every format."))
		Expect(stub.Calls()).To(Equal(2))
		Expect(stub.Last()[1].Content).To(ContainSubstring("Check every acceptance criterion."))
		Expect(stub.ToolResults()).To(HaveExactElements(ContainSubstring("export: MP4, WebM and GIF, each under a minute")))

		var board struct {
			Columns []struct {
				Status string   `json:"status"`
				Tasks  []record `json:"tasks"`
			} `json:"columns"`
		}
		do("GET", "/api/orgboard/board?teamId="+team.ID, nil, &board)
		var types []string
		for _, col := range board.Columns {
			for _, t := range col.Tasks {
				types = append(types, t.Type)
			}
		}
		Expect(types).To(ConsistOf("Feature", "Review"))
	})
})

// criteriaServer is an MCP server (the official Go SDK, streamable HTTP on 127.0.0.1, endpoint
// URL + "/mcp") with one read-only tool, acceptance_criteria, that answers a feature's criteria.
func criteriaServer() *httptest.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "criteria", Version: "1"}, nil)
	type in struct {
		Feature string `json:"feature"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "acceptance_criteria", Description: "The acceptance criteria of a feature.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
			text := args.Feature + ": MP4, WebM and GIF, each under a minute"
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	return httptest.NewServer(mux)
}
