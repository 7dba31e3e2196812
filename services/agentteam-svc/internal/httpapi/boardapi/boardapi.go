// Package boardapi is agentteam-svc's HTTP adapter for the organization board (tag Board):
// structure, teams, tasks, the board, seats, agents, performance and the audit log.
package boardapi

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/bounded"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/seat"
)

// Boards is what the handlers need of the board service.
type Boards interface {
	Cartable(ctx context.Context, memberID string) ([]board.WorkItem, error)
	CreateDivision(ctx context.Context, memberID, organizationID, name string) (board.Division, error)
	Divisions(ctx context.Context, memberID, organizationID string, p org.Page) ([]board.Division, error)
	CreateProduct(ctx context.Context, memberID string, np board.NewProduct) (board.Product, error)
	Products(ctx context.Context, memberID, organizationID string, p org.Page) ([]board.Product, error)
	ProductIdentity(ctx context.Context, memberID, id string) (board.Product, error)
	SetProductIdentity(ctx context.Context, memberID, id, identity string) (board.Product, error)
	CreateTeam(ctx context.Context, memberID, organizationID, name string, productID *string) (board.Team, error)
	Teams(ctx context.Context, memberID, organizationID string, p org.Page) ([]board.Team, error)
	CreateTask(ctx context.Context, memberID string, t board.NewTask) (board.WorkItem, error)
	BoardVersion(ctx context.Context, memberID, teamID string) (int64, error)
	Board(ctx context.Context, memberID, teamID string, p org.Page) ([]board.Column, error)
	Move(ctx context.Context, memberID, taskID, status string) (board.WorkItem, error)
	Assign(ctx context.Context, memberID, taskID, assignee string) (board.WorkItem, error)
	Performance(ctx context.Context, memberID, organizationID string, teamID *string) (board.Performance, error)
	AuditLog(ctx context.Context, memberID, organizationID string, p org.Page) ([]audit.Entry, error)
}

// Seats is what the handlers need of the seat service.
type Seats interface {
	Create(ctx context.Context, memberID, teamID, roleName string) (seat.Seat, error)
	List(ctx context.Context, memberID, teamID string, p org.Page) ([]seat.Seat, error)
	ConfigureAgent(ctx context.Context, memberID, seatID string, c seat.AgentConfig) (seat.Agent, error)
	Agent(ctx context.Context, memberID, seatID string) (seat.Agent, error)
}

// Handler implements ServerInterface.
type Handler struct {
	board  Boards
	seats  Seats
	boards *bounded.Map[boardKey, encodedBoard]
}

// NewHandler returns a Handler.
func NewHandler(b Boards, s Seats) *Handler {
	return &Handler{board: b, seats: s, boards: newBoardCache()}
}

// Policies says who may call each operation of this package: members only, the domain checks
// their capabilities.
func Policies(v *authn.Verifier) httpx.Policies {
	user := httpx.Allow(v.RequireUser())
	ops := []string{
		"getCartable", "createDivision", "listDivisions", "createProduct", "listProducts", "getProductIdentity",
		"putProductIdentity", "createTeam", "listTeams", "createTask", "getBoard", "moveTask", "assignTask",
		"createSeat", "listSeats", "configureAgent", "getAgent", "getPerformance", "listAudit",
	}
	p := make(httpx.Policies, len(ops))
	for _, op := range ops {
		p[op] = user
	}
	return p
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}
