package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/seat"
)

type seatModel struct {
	ID        string `gorm:"primaryKey"`
	TeamID    string
	RoleName  string
	State     string
	MemberID  *string
	AgentID   *string
	CreatedAt time.Time
}

func (seatModel) TableName() string { return "seats" }

func (m seatModel) toDomain() seat.Seat {
	return seat.Seat{ID: m.ID, TeamID: m.TeamID, RoleName: m.RoleName, State: m.State, MemberID: m.MemberID, AgentID: m.AgentID, CreatedAt: m.CreatedAt}
}

type agentModel struct {
	ID                  string `gorm:"primaryKey"`
	SeatID              string
	OrganizationID      string
	TeamID              string
	Name                string
	Monogram            string
	Autonomy            string
	APIConfigID         string  `gorm:"column:api_config_id"`
	FallbackAPIConfigID *string `gorm:"column:fallback_api_config_id"`
	SkillKeys           stringArray
	Docs                stringArray
	Persona             string
	MCPServerIDs        stringArray `gorm:"column:mcp_server_ids"`
	AgentProfileKey     *string
	AgentProfileVersion *string
	MonthlyTokenBudget  *int64
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

func (agentModel) TableName() string { return "agents" }

func toAgentModel(a seat.Agent) agentModel {
	return agentModel{
		ID: a.ID, SeatID: a.SeatID, OrganizationID: a.OrganizationID, TeamID: a.TeamID, Name: a.Name, Monogram: a.Monogram,
		Autonomy: a.Autonomy, APIConfigID: a.APIConfigID, FallbackAPIConfigID: a.FallbackAPIConfigID,
		SkillKeys: stringArray(a.SkillKeys), Docs: stringArray(a.Docs), Persona: a.Persona, MCPServerIDs: stringArray(a.MCPServerIDs),
		AgentProfileKey: a.AgentProfileKey, AgentProfileVersion: a.AgentProfileVersion, MonthlyTokenBudget: a.MonthlyTokenBudget,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	}
}

func (m agentModel) toDomain() seat.Agent {
	return seat.Agent{
		ID: m.ID, SeatID: m.SeatID, OrganizationID: m.OrganizationID, TeamID: m.TeamID, Name: m.Name, Monogram: m.Monogram,
		Autonomy: m.Autonomy, APIConfigID: m.APIConfigID, FallbackAPIConfigID: m.FallbackAPIConfigID,
		SkillKeys: nonNil(m.SkillKeys), Docs: nonNil(m.Docs), Persona: m.Persona, MCPServerIDs: nonNil(m.MCPServerIDs),
		AgentProfileKey: m.AgentProfileKey, AgentProfileVersion: m.AgentProfileVersion, MonthlyTokenBudget: m.MonthlyTokenBudget,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

func nonNil(a stringArray) []string {
	if a == nil {
		return []string{}
	}
	return a
}

// Seats implements seat.Store: seats and the agents configured on them.
type Seats struct{ db *gorm.DB }

// NewSeats returns a Seats store.
func NewSeats(db *gorm.DB) *Seats { return &Seats{db: db} }

// CreateSeat inserts the seat with its audit entry.
func (s *Seats) CreateSeat(ctx context.Context, st seat.Seat, e audit.Entry) error {
	m := seatModel{ID: st.ID, TeamID: st.TeamID, RoleName: st.RoleName, State: st.State, MemberID: st.MemberID, AgentID: st.AgentID, CreatedAt: st.CreatedAt}
	return create(ctx, s.db, "seat", &m, e)
}

// Seat returns seat.NotFound for an unknown id.
func (s *Seats) Seat(ctx context.Context, id string) (seat.Seat, error) {
	var m seatModel
	if err := takeByID(s.db.WithContext(ctx), id, &m, "seat", seat.NotFound); err != nil {
		return seat.Seat{}, err
	}
	return m.toDomain(), nil
}

// Seats lists the team's seats, oldest first.
func (s *Seats) Seats(ctx context.Context, teamID string, p org.Page) ([]seat.Seat, error) {
	var rows []seatModel
	if err := pageOf(ctx, s.db, "team_id", teamID, p, &rows); err != nil {
		return nil, pgdb.Translate(err, "seat")
	}
	return mapAll(rows, seatModel.toDomain), nil
}

// AISeats lists the team's AI seats, oldest first.
func (s *Seats) AISeats(ctx context.Context, teamID string) ([]seat.Seat, error) {
	var rows []seatModel
	err := s.db.WithContext(ctx).Where("team_id = ? AND state = ?", teamID, seat.StateAI).Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "seat")
	}
	return mapAll(rows, seatModel.toDomain), nil
}

// Agent returns the seat's agent, or seat.NoAgent when none is configured.
func (s *Seats) Agent(ctx context.Context, seatID string) (seat.Agent, error) {
	var m agentModel
	err := s.db.WithContext(ctx).Where("seat_id = ?", seatID).Take(&m).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return seat.Agent{}, seat.NoAgent()
	}
	if err != nil {
		return seat.Agent{}, pgdb.Translate(err, "agent")
	}
	return m.toDomain(), nil
}

// ConfigureAgent locks the seat, hands it and its current agent (nil when none) to configure,
// and stores the agent configure returns (created or replaced in place), the seat bound to it
// in state AI, and the audit entry, in one transaction. It returns seat.NotFound for an unknown
// seat and configure's error unchanged.
func (s *Seats) ConfigureAgent(ctx context.Context, seatID string,
	configure func(st seat.Seat, current *seat.Agent) (seat.Agent, audit.Entry, error)) (seat.Agent, error) {
	var out seat.Agent
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var sm seatModel
		if err := takeByID(tx.Clauses(clause.Locking{Strength: "UPDATE"}), seatID, &sm, "seat", seat.NotFound); err != nil {
			return err
		}
		var current *seat.Agent
		var am agentModel
		switch err := tx.Where("seat_id = ?", seatID).Take(&am).Error; {
		case err == nil:
			a := am.toDomain()
			current = &a
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return pgdb.Translate(err, "agent")
		}
		a, e, err := configure(sm.toDomain(), current)
		if err != nil {
			return err
		}
		m := toAgentModel(a)
		if err := tx.Save(&m).Error; err != nil {
			return pgdb.Translate(err, "agent")
		}
		if err := tx.Model(&sm).Updates(map[string]any{"state": seat.StateAI, "agent_id": a.ID}).Error; err != nil {
			return pgdb.Translate(err, "seat")
		}
		out = a
		return writeAudit(tx, e)
	})
	return out, err
}
