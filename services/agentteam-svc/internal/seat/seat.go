// Package seat holds a team's seats and the AI agent configured on a seat: a seat is open,
// held by a human member, or bound to its one agent.
package seat

import (
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Seat states.
const (
	StateOpen  = "Open"
	StateHuman = "Human"
	StateAI    = "AI"
)

// Seat is a role on a team.
type Seat struct {
	ID        string
	TeamID    string
	RoleName  string
	State     string
	MemberID  *string
	AgentID   *string
	CreatedAt time.Time
}

// Agent is the AI configuration of a seat (one per seat).
type Agent struct {
	ID                  string
	SeatID              string
	OrganizationID      string
	TeamID              string
	Name                string
	Monogram            string
	Autonomy            string
	APIConfigID         string
	FallbackAPIConfigID *string
	SkillKeys           []string
	Docs                []string
	Persona             string
	MCPServerIDs        []string
	AgentProfileKey     *string
	AgentProfileVersion *string
	MonthlyTokenBudget  *int64
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// NotFound is the spec's 404 for an unknown seat.
func NotFound() error { return apperr.E(apperr.NotFound, "seat_not_found", "Seat not found.") }

// NoAgent is the spec's 404 for a seat without an agent.
func NoAgent() error {
	return apperr.E(apperr.NotFound, "agent_not_found", "Seat has no agent configured.")
}
