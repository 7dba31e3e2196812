package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/e2e/modelstub"
)

var _ = Describe("a task on an agent team", func() {
	It("goes from creation through Done to a completed QA run against a local model", func() {
		slug := "team-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
		admin("create-tenant", "-slug", slug, "-name", "Team "+slug, "-email", "ops@"+slug+".test")
		admin("create-user", "-tenant", slug, "-email", "ada@"+slug+".test", "-password", "correct horse battery", "-name", "Ada")
		token := admin("token", "-tenant", slug, "-email", "ada@"+slug+".test")["access_token"].(string)

		stub := &modelstub.Stub{Reply: "QA: export works in every format."}
		model := httptest.NewServer(stub)
		DeferCleanup(model.Close)

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
		do("POST", "/api/orgboard/teams", map[string]any{"organizationId": orgID, "name": "Editors"}, &team)
		do("POST", "/api/orgboard/seats", map[string]any{"teamId": team.ID, "roleName": "QA"}, &seat)
		do("POST", "/api/orgboard/seats/"+seat.ID+"/agent", map[string]any{
			"name": "Quinn", "monogram": "QN", "autonomy": "Suggest", "apiConfigId": conn.ID,
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
		Expect(stub.Calls()).To(Equal(1))
		Expect(stub.Last()[1].Content).To(ContainSubstring("Check every acceptance criterion."))

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
