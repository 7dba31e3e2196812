package app_test

import (
	"net/http"
	"strings"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

// agentOf is an agent as the API answers it.
type agentOf struct {
	ID                  string   `json:"id"`
	SeatID              string   `json:"seatId"`
	Name                string   `json:"name"`
	APIConfigID         string   `json:"apiConfigId"`
	FallbackAPIConfigID *string  `json:"fallbackApiConfigId"`
	SkillKeys           []string `json:"skillKeys"`
	Docs                []string `json:"docs"`
	Persona             string   `json:"persona"`
	MCPServerIDs        []string `json:"mcpServerIds"`
	MonthlyTokenBudget  *int64   `json:"monthlyTokenBudget"`
}

var _ = Describe("seats", func() {
	It("opens seats and lists them oldest first", func() {
		c := newCrew()
		team := newTeam(c)
		var s struct{ ID, TeamID, RoleName, State string }
		ok("POST", "/api/orgboard/seats", c.TeamOwner.Token, map[string]any{"teamId": team, "roleName": "Developer"}, &s)
		Expect(s.State).To(Equal("Open"))
		Expect(s.RoleName).To(Equal("Developer"))
		Expect(s.TeamID).To(Equal(team))
		newSeat(c, team, "QA")
		var seats []struct{ RoleName string }
		ok("GET", "/api/orgboard/seats?teamId="+team, c.Member.Token, nil, &seats)
		Expect(seats).To(Equal([]struct{ RoleName string }{{"Developer"}, {"QA"}}))
		Expect(auditActions(c.OrgID)[:2]).To(Equal([]string{"seat.created", "seat.created"}))
	})

	It("answers the spec's messages", func() {
		c := newCrew()
		team := newTeam(c)
		r := client.Do("POST", "/api/orgboard/seats", c.Owner.Token, map[string]any{"teamId": uuid.NewString(), "roleName": "QA"})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Team not found."))
		r = client.Do("POST", "/api/orgboard/seats", c.Owner.Token, map[string]any{"teamId": team, "roleName": ""})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("RoleName is required."))
		r = client.Do("GET", "/api/orgboard/seats?teamId="+uuid.NewString(), c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Team not found."))
	})
})

var _ = Describe("configuring a seat's agent", func() {
	It("creates the agent, turns the seat AI, and replaces the agent in place", func() {
		c := newCrew()
		team := newTeam(c)
		seat := newSeat(c, team, "QA")
		apiConfig, fallback, mcp := ownModel(c), ownModel(c), newMCPServer(c, "http://127.0.0.1:9/mcp", "Bearer x")
		var a agentOf
		ok("POST", "/api/orgboard/seats/"+seat+"/agent", c.TeamOwner.Token, map[string]any{
			"name": "Quinn", "monogram": "QN", "autonomy": "Suggest", "apiConfigId": apiConfig, "fallbackApiConfigId": fallback,
			"skillKeys": []string{"review", "test-plan"}, "docs": []string{"https://docs.example/qa"}, "persona": "Be thorough.",
			"mcpServerIds": []string{mcp}, "monthlyTokenBudget": 100000,
		}, &a)
		Expect(a.SeatID).To(Equal(seat))
		Expect(a.APIConfigID).To(Equal(apiConfig))
		Expect(*a.FallbackAPIConfigID).To(Equal(fallback))
		Expect(a.SkillKeys).To(Equal([]string{"review", "test-plan"}))
		Expect(a.MCPServerIDs).To(Equal([]string{mcp}))
		Expect(*a.MonthlyTokenBudget).To(BeEquivalentTo(100000))

		var seats []struct{ State, AgentID string }
		ok("GET", "/api/orgboard/seats?teamId="+team, c.Member.Token, nil, &seats)
		Expect(seats[0].State).To(Equal("AI"))
		Expect(seats[0].AgentID).To(Equal(a.ID))

		var replaced agentOf
		ok("POST", "/api/orgboard/seats/"+seat+"/agent", c.Owner.Token, map[string]any{"name": "Quinn 2", "apiConfigId": apiConfig}, &replaced)
		Expect(replaced.ID).To(Equal(a.ID))
		Expect(replaced.Name).To(Equal("Quinn 2"))
		Expect(replaced.SkillKeys).To(BeEmpty())
		Expect(replaced.MCPServerIDs).To(BeEmpty())
		Expect(replaced.FallbackAPIConfigID).To(BeNil())
		var got agentOf
		ok("GET", "/api/orgboard/seats/"+seat+"/agent", c.Member.Token, nil, &got)
		Expect(got).To(Equal(replaced))
		Expect(count(`SELECT count(*) FROM agents WHERE seat_id = ?`, seat)).To(Equal(1))
		Expect(auditActions(c.OrgID)[:2]).To(Equal([]string{"agent.configured", "agent.configured"}))
	})

	It("answers the spec's 400 and 404 messages", func() {
		c := newCrew()
		seat := newSeat(c, newTeam(c), "Dev")
		for _, body := range []map[string]any{{"apiConfigId": uuid.NewString()}, {"name": "X"}, {"name": "X", "apiConfigId": ""}, {"name": " ", "apiConfigId": uuid.NewString()}} {
			r := client.Do("POST", "/api/orgboard/seats/"+seat+"/agent", c.Owner.Token, body)
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(string(r.Body)).To(Equal("Name and apiConfigId are required."))
		}
		r := client.Do("POST", "/api/orgboard/seats/"+seat+"/agent", c.Owner.Token, map[string]any{"name": "X", "apiConfigId": "not-a-uuid"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("apiConfigId must be a UUID."))
		r = client.Do("POST", "/api/orgboard/seats/"+seat+"/agent", c.Owner.Token, map[string]any{
			"name": "X", "apiConfigId": uuid.NewString(), "skillKeys": strings.Split(strings.Repeat("k,", 101), ",")})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = client.Do("POST", "/api/orgboard/seats/"+uuid.NewString()+"/agent", c.Owner.Token, map[string]any{"name": "X", "apiConfigId": uuid.NewString()})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Seat not found."))
		r = client.Do("GET", "/api/orgboard/seats/"+seat+"/agent", c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Seat has no agent configured."))
		r = client.Do("GET", "/api/orgboard/seats/"+uuid.NewString()+"/agent", c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Seat not found."))
		Expect(count(`SELECT count(*) FROM agents WHERE seat_id = ?`, seat)).To(BeZero())
	})

	It("refuses another organization's model connections and MCP servers, and accepts ids naming none", func() {
		c, other := newCrew(), newCrew()
		seat := newSeat(c, newTeam(c), "Dev")
		own, theirs := ownModel(c), ownModel(other)
		theirServer := newMCPServer(other, "http://127.0.0.1:9/mcp", "Bearer theirs")
		for _, tc := range []struct {
			body map[string]any
			msg  string
		}{
			{map[string]any{"apiConfigId": theirs}, "apiConfigId must name one of the organization's model connections."},
			{map[string]any{"apiConfigId": own, "fallbackApiConfigId": theirs}, "fallbackApiConfigId must name one of the organization's model connections."},
			{map[string]any{"apiConfigId": own, "mcpServerIds": []string{theirServer}}, "mcpServerIds must name the organization's MCP servers."},
		} {
			tc.body["name"] = "Borrower"
			r := client.Do("POST", "/api/orgboard/seats/"+seat+"/agent", c.Owner.Token, tc.body)
			Expect(r.Status).To(Equal(http.StatusBadRequest), "%v", tc.body)
			Expect(string(r.Body)).To(Equal(tc.msg))
		}
		Expect(count(`SELECT count(*) FROM agents WHERE seat_id = ?`, seat)).To(BeZero())
		ok("POST", "/api/orgboard/seats/"+seat+"/agent", c.Owner.Token, map[string]any{
			"name": "Unknowns", "apiConfigId": uuid.NewString(), "fallbackApiConfigId": uuid.NewString(), "mcpServerIds": []string{uuid.NewString()},
		}, nil)
		Expect(count(`SELECT count(*) FROM agents WHERE seat_id = ?`, seat)).To(Equal(1))
	})

	It("holds the capability matrix on seats and agents", func() {
		c := newCrew()
		team := newTeam(c)
		seat, _ := newAISeat(c, team, "Dev")
		conn := ownModel(c)
		expectMatrix(c, configurer, func(t string) testkit.Response {
			return client.Do("POST", "/api/orgboard/seats", t, map[string]any{"teamId": team, "roleName": "R"})
		})
		expectMatrix(c, anyMember, func(t string) testkit.Response { return client.Do("GET", "/api/orgboard/seats?teamId="+team, t, nil) })
		expectMatrix(c, configurer, func(t string) testkit.Response {
			return client.Do("POST", "/api/orgboard/seats/"+seat+"/agent", t, map[string]any{"name": "A", "apiConfigId": conn})
		})
		expectMatrix(c, anyMember, func(t string) testkit.Response { return client.Do("GET", "/api/orgboard/seats/"+seat+"/agent", t, nil) })
	})
})
