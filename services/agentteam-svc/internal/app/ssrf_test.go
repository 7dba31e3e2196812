package app_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/mcpclient/mcptest"
)

// The SSRF sweep for MCP servers and model connections. The suite allows loopback (its stubs
// listen on 127.0.0.1), as local development does; everything else the platform never calls is
// refused when the URL is registered and again when the worker or a test call connects, after
// DNS, on every connection, redirects included.

// hostedAt rewrites a 127.0.0.1 URL to reach the same port through name, which resolves to
// addr on the suite's DNS server.
func hostedAt(raw, name, addr string) string {
	GinkgoHelper()
	dnsServer.SetAddrs(name, netip.MustParseAddr(addr))
	u, err := url.Parse(raw)
	Expect(err).NotTo(HaveOccurred())
	u.Host = name + ":" + u.Port()
	return u.String()
}

var _ = Describe("SSRF attempts through MCP servers", func() {
	testServer := func(c crew, id string) map[string]any {
		GinkgoHelper()
		var out map[string]any
		ok("POST", "/api/orgboard/mcp-servers/"+id+"/test", c.Owner.Token, nil, &out)
		return out
	}

	DescribeTable("refuses the url when the server is registered, with a 400 saying why",
		func(raw, message string) {
			c := newCrew()
			r := client.Do("POST", "/api/orgboard/mcp-servers", c.Owner.Token, map[string]any{
				"organizationId": c.OrgID, "name": "Wiki", "url": raw,
			})
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(string(r.Body)).To(Equal("url " + message + "."))
		},
		testkit.SSRFRefusedURLs(),
	)

	DescribeTable("refuses at connect time a name that passed registration but resolves to a refused address",
		func(addr string) {
			c := newCrew()
			srv := mcptest.New("token")
			DeferCleanup(srv.Close)
			id := newMCPServer(c, hostedAt(srv.URL+"/mcp", testkit.SSRFName("mcp", addr), addr), "Bearer token")
			Expect(testServer(c, id)).To(Equal(map[string]any{
				"reachable": false, "tools": []any{}, "error": "The server's address is not allowed.",
			}))
		},
		testkit.SSRFResolvedAddrs(),
	)

	It("reaches a server through a name resolving to the allowed loopback, so the refusals come from the addresses", func() {
		c := newCrew()
		srv := mcptest.New("token")
		DeferCleanup(srv.Close)
		id := newMCPServer(c, hostedAt(srv.URL+"/mcp", "mcp-allowed.example.test", "127.0.0.1"), "Bearer token")
		Expect(testServer(c, id)).To(HaveKeyWithValue("reachable", true))
	})

	DescribeTable("answers a redirect as an error and never follows it",
		func(location string) {
			c := newCrew()
			redirector := testkit.NewRedirector(dnsServer, location)
			id := newMCPServer(c, redirector.URL+"/mcp", "Bearer token")
			Expect(testServer(c, id)).To(Equal(map[string]any{
				"reachable": false, "tools": []any{}, "error": "The server answered HTTP 302.",
			}))
			Expect(redirector.Followed.Load()).To(BeZero())
		},
		testkit.SSRFRedirectTargets(),
	)
})

var _ = Describe("SSRF attempts through model connections", func() {
	const key = "sk-ssrf-key-0a1b2c3d4e5f"

	DescribeTable("refuses the baseUrl when the connection is registered, with a 400 saying why",
		func(raw, message string) {
			c := newCrew()
			r := client.Do("POST", "/api/orgboard/model-connections", c.Owner.Token, map[string]any{
				"organizationId": c.OrgID, "name": "Primary", "baseUrl": raw, "model": "m", "apiKey": key,
			})
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(string(r.Body)).To(Equal("baseUrl " + message + "."))
		},
		testkit.SSRFRefusedURLs(),
	)

	Describe("when the worker calls the model", func() {
		BeforeEach(func() { startWorker() })

		// failedRun runs the team's task and answers the failed run.
		failedRun := func(t aiTeam) runRow {
			GinkgoHelper()
			id := t.enqueue()
			Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Failed"))
			return readRun(id)
		}

		DescribeTable("refuses a name that passed registration but resolves to a refused address, without retrying",
			func(addr string) {
				c := newCrew()
				model := newModelStub(answering("never"))
				conn := newConnection(c, hostedAt(model.URL+"/v1", testkit.SSRFName("model", addr), addr), key)
				r := failedRun(seedTeam(c, agentSpec{Primary: conn}))
				Expect(r.ErrorCode).To(Equal("model_refused_destination"))
				Expect(r.Error).To(Equal("The model endpoint's address is not allowed."))
				Expect(r.Attempts).To(Equal(1))
				Expect(model.calls()).To(BeEmpty())
			},
			testkit.SSRFResolvedAddrs(),
		)

		It("completes a run through a name resolving to the allowed loopback, so the refusals come from the addresses", func() {
			c := newCrew()
			model := newModelStub(answering("fine"))
			conn := newConnection(c, hostedAt(model.URL+"/v1", "model-allowed.example.test", "127.0.0.1"), key)
			id := seedTeam(c, agentSpec{Primary: conn}).enqueue()
			Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Completed"))
		})

		DescribeTable("fails on a redirect at once and never follows it",
			func(location string) {
				c := newCrew()
				redirector := testkit.NewRedirector(dnsServer, location)
				r := failedRun(seedTeam(c, agentSpec{Primary: newConnection(c, redirector.URL+"/v1", key)}))
				Expect(r.ErrorCode).To(Equal("model_redirected"))
				Expect(r.Error).To(Equal("The model endpoint answered a redirect (HTTP 302), which is not followed."))
				Expect(redirector.Hits.Load()).To(BeEquivalentTo(1), "a redirect is final, not retried")
				Expect(redirector.Followed.Load()).To(BeZero())
			},
			testkit.SSRFRedirectTargets(),
		)
	})
})
