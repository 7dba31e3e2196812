package app_test

import (
	"bytes"
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/mcpclient/mcptest"
)

// newConnection registers a model connection as the crew's Owner and returns its id.
func newConnection(c crew, baseURL, apiKey string) string {
	GinkgoHelper()
	r := client.Do("POST", "/api/orgboard/model-connections", c.Owner.Token, map[string]any{
		"organizationId": c.OrgID, "name": "Primary", "baseUrl": baseURL, "model": "stub-model", "apiKey": apiKey,
	})
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	var out struct{ Id string }
	r.JSON(&out)
	return out.Id
}

// newMCPServer registers an MCP server with one Authorization header and returns its id.
func newMCPServer(c crew, url, authorization string) string {
	GinkgoHelper()
	r := client.Do("POST", "/api/orgboard/mcp-servers", c.Owner.Token, map[string]any{
		"organizationId": c.OrgID, "name": "Wiki", "url": url, "headers": map[string]string{"authorization": authorization},
	})
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	var out struct{ Id string }
	r.JSON(&out)
	return out.Id
}

var _ = Describe("model connections", func() {
	const key = "sk-test-0123456789-abcd"

	It("stores the key sealed and answers only its last four characters", func() {
		c := newCrew()
		r := client.Do("POST", "/api/orgboard/model-connections", c.Owner.Token, map[string]any{
			"organizationId": c.OrgID, "name": "Local", "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "apiKey": key,
		})
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var conn map[string]any
		r.JSON(&conn)
		Expect(conn).To(HaveKeyWithValue("apiKeyLast4", "abcd"))
		Expect(conn).To(HaveKeyWithValue("baseUrl", "http://127.0.0.1:9/v1"))
		Expect(conn).NotTo(HaveKey("apiKey"))
		Expect(string(r.Body)).NotTo(ContainSubstring(key))

		r = client.Do("GET", "/api/orgboard/model-connections?organizationId="+c.OrgID, c.TeamOwner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(string(r.Body)).To(ContainSubstring(conn["id"].(string)))
		Expect(string(r.Body)).NotTo(ContainSubstring(key))

		var row struct{ APIKeySealed []byte }
		Expect(db.Raw(`SELECT api_key_sealed FROM model_connections WHERE id = ?`, conn["id"]).Scan(&row).Error).To(Succeed())
		Expect(row.APIKeySealed).NotTo(BeEmpty())
		Expect(bytes.Contains(row.APIKeySealed, []byte(key))).To(BeFalse())
		Expect(auditActions(c.OrgID)).To(ContainElement("connection.created"))
		Expect(logs.String()).NotTo(ContainSubstring(key))
	})

	It("shows no characters of a short key", func() {
		c := newCrew()
		r := client.Do("POST", "/api/orgboard/model-connections", c.Owner.Token, map[string]any{
			"organizationId": c.OrgID, "name": "Local", "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "apiKey": "short",
		})
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(string(r.Body)).To(ContainSubstring(`"apiKeyLast4":""`))
	})

	DescribeTable("refuses a bad connection with a 400 saying why",
		func(change map[string]any, message string) {
			c := newCrew()
			body := map[string]any{"organizationId": c.OrgID, "name": "Local", "baseUrl": "https://models.example.com/v1", "model": "m", "apiKey": key}
			for k, v := range change {
				body[k] = v
			}
			r := client.Do("POST", "/api/orgboard/model-connections", c.Owner.Token, body)
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(string(r.Body)).To(Equal(message))
			Expect(auditActions(c.OrgID)).NotTo(ContainElement("connection.created"))
		},
		Entry("blank name", map[string]any{"name": " "}, "name, baseUrl, model, and apiKey are required."),
		Entry("blank key", map[string]any{"apiKey": ""}, "name, baseUrl, model, and apiKey are required."),
		Entry("another scheme", map[string]any{"baseUrl": "ftp://models.example.com"}, "baseUrl must start with http:// or https://."),
		Entry("a private address", map[string]any{"baseUrl": "http://10.1.2.3/v1"}, "baseUrl must not point to a private, loopback or reserved address."),
		Entry("user info", map[string]any{"baseUrl": "https://u:p@models.example.com"}, "baseUrl must not contain a user name or password."),
		Entry("a NUL byte", map[string]any{"name": "a\x00b"}, `Field "name" must be valid UTF-8 text without NUL characters.`),
	)

	It("deletes a connection, audited, and answers 404 for an unknown one", func() {
		c := newCrew()
		id := newConnection(c, "http://127.0.0.1:9/v1", key)
		r := client.Do("DELETE", "/api/orgboard/model-connections/"+id, c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(string(r.Body)).To(ContainSubstring(id))
		Expect(auditActions(c.OrgID)[0]).To(Equal("connection.deleted"))

		r = client.Do("DELETE", "/api/orgboard/model-connections/"+id, c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Model connection not found."))
		r = client.Do("GET", "/api/orgboard/model-connections?organizationId="+c.OrgID, c.Owner.Token, nil)
		Expect(string(r.Body)).To(Equal("[]\n"))
	})

	DescribeTable("capabilities: write needs ManageApiKeys (Owner), read ConfigureAgents (Owner, TeamOwner)",
		func(role string, create, list, del int) {
			c := newCrew()
			r := client.Do("POST", "/api/orgboard/model-connections", c.as(role), map[string]any{
				"organizationId": c.OrgID, "name": "x", "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "apiKey": key,
			})
			Expect(r.Status).To(Equal(create))
			if create == http.StatusForbidden {
				Expect(r.Body).To(BeEmpty())
			}
			r = client.Do("GET", "/api/orgboard/model-connections?organizationId="+c.OrgID, c.as(role), nil)
			Expect(r.Status).To(Equal(list))
			id := newConnection(c, "http://127.0.0.1:9/v1", key)
			r = client.Do("DELETE", "/api/orgboard/model-connections/"+id, c.as(role), nil)
			Expect(r.Status).To(Equal(del))
		},
		Entry("Owner", "Owner", 200, 200, 200),
		Entry("TeamOwner", "TeamOwner", 403, 200, 403),
		Entry("Member", "Member", 403, 403, 403),
		Entry("stranger", "Stranger", 403, 403, 403),
	)

	It("answers 401 without a token", func() {
		Expect(client.Do("GET", "/api/orgboard/model-connections?organizationId="+uuid.NewString(), "", nil).Status).To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("MCP servers", func() {
	const token = "mcp-secret-token-42"

	It("seals the headers, answers only their names, and tests the server through every page of tools", func() {
		c := newCrew()
		srv := mcptest.New(token)
		DeferCleanup(srv.Close)
		r := client.Do("POST", "/api/orgboard/mcp-servers", c.Owner.Token, map[string]any{
			"organizationId": c.OrgID, "name": "Wiki", "url": srv.URL + "/mcp",
			"headers": map[string]string{"authorization": "Bearer " + token, "X-Team": "blue"},
		})
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var s map[string]any
		r.JSON(&s)
		Expect(s["headerNames"]).To(Equal([]any{"Authorization", "X-Team"}))
		Expect(string(r.Body)).NotTo(ContainSubstring(token))
		Expect(auditActions(c.OrgID)).To(ContainElement("mcp_server.created"))

		r = client.Do("POST", "/api/orgboard/mcp-servers/"+s["id"].(string)+"/test", c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(r.Body).To(MatchJSON(`{"reachable": true, "tools": ["search", "fetch", "summarize"]}`))

		r = client.Do("GET", "/api/orgboard/mcp-servers?organizationId="+c.OrgID, c.TeamOwner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(string(r.Body)).To(ContainSubstring(`"headerNames":["Authorization","X-Team"]`))
		Expect(string(r.Body)).NotTo(ContainSubstring(token))
		Expect(logs.String()).NotTo(ContainSubstring(token))
	})

	It("answers an unreachable or refusing server as not reachable, with a short reason and no body", func() {
		c := newCrew()
		srv := mcptest.New("the-right-one")
		DeferCleanup(srv.Close)
		id := newMCPServer(c, srv.URL+"/mcp", "Bearer wrong-one")
		r := client.Do("POST", "/api/orgboard/mcp-servers/"+id+"/test", c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(r.Body).To(MatchJSON(`{"reachable": false, "tools": [], "error": "The server refused the credentials (HTTP 401)."}`))

		gone := newMCPServer(c, "http://127.0.0.1:1/mcp", "Bearer x")
		r = client.Do("POST", "/api/orgboard/mcp-servers/"+gone+"/test", c.Owner.Token, nil)
		Expect(r.Body).To(MatchJSON(`{"reachable": false, "tools": [], "error": "The server could not be reached."}`))
		Expect(logs.String()).NotTo(ContainSubstring("wrong-one"))
	})

	DescribeTable("refuses bad servers with a 400",
		func(body map[string]any, message string) {
			c := newCrew()
			body["organizationId"] = c.OrgID
			r := client.Do("POST", "/api/orgboard/mcp-servers", c.Owner.Token, body)
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(string(r.Body)).To(Equal(message))
		},
		Entry("blank url", map[string]any{"name": "x", "url": ""}, "name and url are required."),
		Entry("a reserved header", map[string]any{"name": "x", "url": "https://mcp.example.com/mcp", "headers": map[string]string{"mcp-session-id": "x"}},
			"header Mcp-Session-Id is set by the client and cannot be configured."),
		Entry("a header name that is no token", map[string]any{"name": "x", "url": "https://mcp.example.com/mcp", "headers": map[string]string{"bad name": "x"}},
			"header names must be HTTP tokens of 1 to 100 characters."),
		Entry("a line break in a value", map[string]any{"name": "x", "url": "https://mcp.example.com/mcp", "headers": map[string]string{"X-A": "a\r\nB: c"}},
			"header values must be at most 8000 characters, without line breaks or NUL bytes."),
	)

	It("deletes a server, audited, and answers 404 for an unknown one", func() {
		c := newCrew()
		id := newMCPServer(c, "https://mcp.example.com/mcp", "Bearer x")
		Expect(client.Do("DELETE", "/api/orgboard/mcp-servers/"+id, c.Owner.Token, nil).Status).To(Equal(http.StatusOK))
		Expect(auditActions(c.OrgID)[0]).To(Equal("mcp_server.deleted"))
		for _, path := range []string{"/api/orgboard/mcp-servers/" + id, "/api/orgboard/mcp-servers/" + id + "/test"} {
			method := "DELETE"
			if path != "/api/orgboard/mcp-servers/"+id {
				method = "POST"
			}
			r := client.Do(method, path, c.Owner.Token, nil)
			Expect(r.Status).To(Equal(http.StatusNotFound))
			Expect(string(r.Body)).To(Equal("MCP server not found."))
		}
	})

	DescribeTable("capabilities: create, delete and test need ManageApiKeys (Owner), list ConfigureAgents",
		func(role string, create, list, test, del int) {
			c := newCrew()
			r := client.Do("POST", "/api/orgboard/mcp-servers", c.as(role), map[string]any{
				"organizationId": c.OrgID, "name": "x", "url": "http://127.0.0.1:1/mcp",
			})
			Expect(r.Status).To(Equal(create))
			Expect(client.Do("GET", "/api/orgboard/mcp-servers?organizationId="+c.OrgID, c.as(role), nil).Status).To(Equal(list))
			id := newMCPServer(c, "http://127.0.0.1:1/mcp", "Bearer x")
			Expect(client.Do("POST", "/api/orgboard/mcp-servers/"+id+"/test", c.as(role), nil).Status).To(Equal(test))
			Expect(client.Do("DELETE", "/api/orgboard/mcp-servers/"+id, c.as(role), nil).Status).To(Equal(del))
		},
		Entry("Owner", "Owner", 200, 200, 200, 200),
		Entry("TeamOwner", "TeamOwner", 403, 200, 403, 403),
		Entry("Member", "Member", 403, 403, 403, 403),
		Entry("stranger", "Stranger", 403, 403, 403, 403),
	)
})
