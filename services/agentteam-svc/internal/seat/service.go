package seat

import (
	"context"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// Store persists seats and agents; every mutation writes its audit entry in the same
// transaction.
type Store interface {
	CreateSeat(ctx context.Context, s Seat, e audit.Entry) error
	// Seat returns NotFound for an unknown id.
	Seat(ctx context.Context, id string) (Seat, error)
	Seats(ctx context.Context, teamID string, p org.Page) ([]Seat, error)
	// Agent returns NoAgent when the seat has none.
	Agent(ctx context.Context, seatID string) (Agent, error)
	// ConfigureAgent locks the seat, lets configure build its agent from the current one (nil
	// when none) and stores it with the seat bound to it in state AI.
	ConfigureAgent(ctx context.Context, seatID string, configure func(s Seat, current *Agent) (Agent, audit.Entry, error)) (Agent, error)
}

// Personas resolves agent profiles (the skill library's agent-profile library).
type Personas interface {
	// Persona returns the body of the agent profile the organization resolves for key (the
	// exact version when one is given) and that version; NotFound for an unknown profile.
	Persona(ctx context.Context, organizationID, key, version string) (persona, resolvedVersion string, err error)
}

// Connections tells which organization a model connection or an MCP server belongs to, ""
// for an id naming none (connection.Service).
type Connections interface {
	ModelOrganization(ctx context.Context, id string) (string, error)
	MCPServerOrganization(ctx context.Context, id string) (string, error)
}

// Service implements seats and agent configuration.
type Service struct {
	store    Store
	access   *access.Checker
	personas Personas
	conns    Connections
	newID    func() string
	now      func() time.Time
}

// NewService returns a Service.
func NewService(store Store, checker *access.Checker, personas Personas, conns Connections, newID func() string, now func() time.Time) *Service {
	return &Service{store: store, access: checker, personas: personas, conns: conns, newID: newID, now: now}
}

// Create opens a seat on the team (ConfigureAgents). It returns Invalid, access.TeamNotFound
// and Forbidden.
func (s *Service) Create(ctx context.Context, memberID, teamID, roleName string) (Seat, error) {
	var c check.Checker
	c.AddIf(check.Blank(roleName), "RoleName", "is required")
	c.Text("roleName", &roleName, check.NameMax)
	if err := c.First(); err != nil {
		return Seat{}, err
	}
	orgID, err := s.access.Require(ctx, memberID, access.ConfigureAgents, access.Team(teamID))
	if err != nil {
		return Seat{}, err
	}
	st := Seat{ID: s.newID(), TeamID: teamID, RoleName: strings.TrimSpace(roleName), State: StateOpen, CreatedAt: s.now()}
	return st, s.store.CreateSeat(ctx, st, audit.New(orgID, memberID, "seat.created", "Seat", st.ID, st.RoleName))
}

// List lists the team's seats, oldest first (ViewBoard). It returns access.TeamNotFound and
// Forbidden.
func (s *Service) List(ctx context.Context, memberID, teamID string, p org.Page) ([]Seat, error) {
	if _, err := s.access.Require(ctx, memberID, access.ViewBoard, access.Team(teamID)); err != nil {
		return nil, err
	}
	return s.store.Seats(ctx, teamID, p)
}

// AgentConfig is an agent's configuration as a client sends it.
type AgentConfig struct {
	Name, Monogram, Autonomy, APIConfigID, Persona string
	FallbackAPIConfigID                            *string
	SkillKeys, Docs, MCPServerIDs                  []string
	AgentProfileKey, AgentProfileVersion           *string
	MonthlyTokenBudget                             *int64
}

func (c AgentConfig) validate() error {
	var ch check.Checker
	ch.AddIf(check.Blank(c.Name) || check.Blank(c.APIConfigID), "Name and apiConfigId", "are required")
	ch.AddIf(c.MonthlyTokenBudget != nil && *c.MonthlyTokenBudget < 0, "monthlyTokenBudget", "must not be negative")
	ch.Text("name", &c.Name, check.NameMax)
	ch.Text("monogram", &c.Monogram, check.NameMax)
	ch.Text("autonomy", &c.Autonomy, check.NameMax)
	ch.Text("persona", &c.Persona, check.DocMax)
	ch.Text("agentProfileKey", c.AgentProfileKey, check.NameMax)
	ch.Text("agentProfileVersion", c.AgentProfileVersion, check.NameMax)
	ch.List("skillKeys", c.SkillKeys, check.ListMax, check.NameMax)
	ch.List("docs", c.Docs, check.ListMax, check.DocMax)
	ch.List("mcpServerIds", c.MCPServerIDs, check.ListMax, check.NameMax)
	return ch.First()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ConfigureAgent creates or replaces the seat's one agent; the seat becomes AI
// (ConfigureAgents on its team). Its model connections and MCP servers must not be another
// organization's. With an agentProfileKey the resolved profile's body becomes the persona and
// its version is recorded. It returns Invalid, NotFound (also for an unknown agent profile) and
// Forbidden.
func (s *Service) ConfigureAgent(ctx context.Context, memberID, seatID string, c AgentConfig) (Agent, error) {
	if err := c.validate(); err != nil {
		return Agent{}, err
	}
	st, err := s.store.Seat(ctx, seatID)
	if err != nil {
		return Agent{}, err
	}
	orgID, err := s.access.Require(ctx, memberID, access.ConfigureAgents, access.Team(st.TeamID))
	if err != nil {
		return Agent{}, err
	}
	if err := s.ownConnections(ctx, orgID, c); err != nil {
		return Agent{}, err
	}
	if err := s.applyProfile(ctx, orgID, &c); err != nil {
		return Agent{}, err
	}
	now := s.now()
	return s.store.ConfigureAgent(ctx, seatID, func(st Seat, current *Agent) (Agent, audit.Entry, error) {
		a := Agent{
			ID: s.newID(), SeatID: st.ID, OrganizationID: orgID, TeamID: st.TeamID, Name: c.Name, Monogram: c.Monogram,
			Autonomy: c.Autonomy, APIConfigID: c.APIConfigID, FallbackAPIConfigID: c.FallbackAPIConfigID,
			SkillKeys: orEmpty(c.SkillKeys), Docs: orEmpty(c.Docs), Persona: c.Persona, MCPServerIDs: orEmpty(c.MCPServerIDs),
			AgentProfileKey: c.AgentProfileKey, AgentProfileVersion: c.AgentProfileVersion, MonthlyTokenBudget: c.MonthlyTokenBudget,
			CreatedAt: now, UpdatedAt: now,
		}
		if current != nil {
			a.ID, a.CreatedAt = current.ID, current.CreatedAt
		}
		return a, audit.New(orgID, memberID, "agent.configured", "Agent", a.ID, "seat "+st.ID+": "+a.Name), nil
	})
}

// ownConnections refuses a configuration naming another organization's model connection or
// MCP server, so an agent never uses another organization's key or headers. An id naming none
// is accepted, as the spec lists no error for it: a run with it fails (no_connection) and an
// unknown MCP server is skipped.
func (s *Service) ownConnections(ctx context.Context, orgID string, c AgentConfig) error {
	models := [][2]string{{"apiConfigId", c.APIConfigID}}
	if f := deref(c.FallbackAPIConfigID); f != "" {
		models = append(models, [2]string{"fallbackApiConfigId", f})
	}
	for _, m := range models {
		owner, err := s.conns.ModelOrganization(ctx, m[1])
		if err != nil {
			return err
		}
		if owner != "" && owner != orgID {
			return apperr.Invalidf("%s must name one of the organization's model connections.", m[0])
		}
	}
	for _, id := range c.MCPServerIDs {
		owner, err := s.conns.MCPServerOrganization(ctx, id)
		if err != nil {
			return err
		}
		if owner != "" && owner != orgID {
			return apperr.Invalidf("mcpServerIds must name the organization's MCP servers.")
		}
	}
	return nil
}

// applyProfile replaces the configuration's persona with the body of its agent profile, if any.
func (s *Service) applyProfile(ctx context.Context, orgID string, c *AgentConfig) error {
	if check.Blank(deref(c.AgentProfileKey)) {
		c.AgentProfileKey, c.AgentProfileVersion = nil, nil
		return nil
	}
	persona, version, err := s.personas.Persona(ctx, orgID, *c.AgentProfileKey, deref(c.AgentProfileVersion))
	if err != nil {
		return err
	}
	c.Persona, c.AgentProfileVersion = persona, &version
	return nil
}

func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// Agent answers the seat's agent (ViewBoard on its team). It returns NotFound for an unknown
// seat, NoAgent and Forbidden.
func (s *Service) Agent(ctx context.Context, memberID, seatID string) (Agent, error) {
	st, err := s.store.Seat(ctx, seatID)
	if err != nil {
		return Agent{}, err
	}
	if _, err := s.access.Require(ctx, memberID, access.ViewBoard, access.Team(st.TeamID)); err != nil {
		return Agent{}, err
	}
	return s.store.Agent(ctx, seatID)
}
