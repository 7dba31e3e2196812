package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

type divisionModel struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	Name           string
	CreatedAt      time.Time
}

func (divisionModel) TableName() string { return "divisions" }

func (m divisionModel) toDomain() board.Division {
	return board.Division{ID: m.ID, OrganizationID: m.OrganizationID, Name: m.Name, CreatedAt: m.CreatedAt}
}

type productModel struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	DivisionID     *string
	Name           string
	Kind           string
	Identity       string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (productModel) TableName() string { return "products" }

func (m productModel) toDomain() board.Product {
	return board.Product{
		ID: m.ID, OrganizationID: m.OrganizationID, DivisionID: m.DivisionID, Name: m.Name, Kind: m.Kind,
		Identity: m.Identity, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

type teamModel struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	Name           string
	ProductID      *string
	CreatedAt      time.Time
}

func (teamModel) TableName() string { return "teams" }

func (m teamModel) toDomain() board.Team {
	return board.Team{ID: m.ID, OrganizationID: m.OrganizationID, Name: m.Name, ProductID: m.ProductID, CreatedAt: m.CreatedAt}
}

// Structure implements board.StructureStore: divisions, products and teams.
type Structure struct{ db *gorm.DB }

// NewStructure returns a Structure store.
func NewStructure(db *gorm.DB) *Structure { return &Structure{db: db} }

// create inserts m and the audit entry in one transaction.
func create(ctx context.Context, db *gorm.DB, what string, m any, e audit.Entry) error {
	return pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
		if err := tx.Create(m).Error; err != nil {
			return pgdb.Translate(err, what)
		}
		return writeAudit(tx, e)
	})
}

// CreateDivision inserts the division with its audit entry.
func (s *Structure) CreateDivision(ctx context.Context, d board.Division, e audit.Entry) error {
	return create(ctx, s.db, "division", &divisionModel{ID: d.ID, OrganizationID: d.OrganizationID, Name: d.Name, CreatedAt: d.CreatedAt}, e)
}

// Division returns NotFound for an unknown id.
func (s *Structure) Division(ctx context.Context, id string) (board.Division, error) {
	var m divisionModel
	if err := takeByID(s.db.WithContext(ctx), id, &m, "division", nil); err != nil {
		return board.Division{}, err
	}
	return m.toDomain(), nil
}

// Divisions lists the organization's divisions, oldest first.
func (s *Structure) Divisions(ctx context.Context, organizationID string, p org.Page) ([]board.Division, error) {
	var rows []divisionModel
	if err := pageOf(ctx, s.db, "organization_id", organizationID, p, &rows); err != nil {
		return nil, pgdb.Translate(err, "division")
	}
	return mapAll(rows, divisionModel.toDomain), nil
}

// CreateProduct inserts the product with its audit entry.
func (s *Structure) CreateProduct(ctx context.Context, p board.Product, e audit.Entry) error {
	m := productModel{
		ID: p.ID, OrganizationID: p.OrganizationID, DivisionID: p.DivisionID, Name: p.Name, Kind: p.Kind, Identity: p.Identity,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
	}
	return create(ctx, s.db, "product", &m, e)
}

// Product returns NotFound for an unknown id.
func (s *Structure) Product(ctx context.Context, id string) (board.Product, error) {
	var m productModel
	if err := takeByID(s.db.WithContext(ctx), id, &m, "product", nil); err != nil {
		return board.Product{}, err
	}
	return m.toDomain(), nil
}

// Products lists the organization's products and services, oldest first.
func (s *Structure) Products(ctx context.Context, organizationID string, p org.Page) ([]board.Product, error) {
	var rows []productModel
	if err := pageOf(ctx, s.db, "organization_id", organizationID, p, &rows); err != nil {
		return nil, pgdb.Translate(err, "product")
	}
	return mapAll(rows, productModel.toDomain), nil
}

// SetProductIdentity replaces the product's identity text and writes the audit entry in one
// transaction; NotFound for an unknown product.
func (s *Structure) SetProductIdentity(ctx context.Context, id, identity string, e audit.Entry) (board.Product, error) {
	var m productModel
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&m).Error; err != nil {
			return pgdb.Translate(err, "product")
		}
		m.Identity, m.UpdatedAt = identity, time.Now().UTC()
		if err := tx.Model(&m).Select("identity", "updated_at").Updates(&m).Error; err != nil {
			return pgdb.Translate(err, "product")
		}
		return writeAudit(tx, e)
	})
	return m.toDomain(), err
}

// CreateTeam inserts the team with its audit entry.
func (s *Structure) CreateTeam(ctx context.Context, t board.Team, e audit.Entry) error {
	return create(ctx, s.db, "team", &teamModel{ID: t.ID, OrganizationID: t.OrganizationID, Name: t.Name, ProductID: t.ProductID, CreatedAt: t.CreatedAt}, e)
}

// Team returns access.TeamNotFound for an unknown id.
func (s *Structure) Team(ctx context.Context, id string) (board.Team, error) {
	var m teamModel
	if err := takeByID(s.db.WithContext(ctx), id, &m, "team", access.TeamNotFound); err != nil {
		return board.Team{}, err
	}
	return m.toDomain(), nil
}

// Teams lists the organization's teams, oldest first.
func (s *Structure) Teams(ctx context.Context, organizationID string, p org.Page) ([]board.Team, error) {
	var rows []teamModel
	if err := pageOf(ctx, s.db, "organization_id", organizationID, p, &rows); err != nil {
		return nil, pgdb.Translate(err, "team")
	}
	return mapAll(rows, teamModel.toDomain), nil
}

// pageOf reads a page of the rows of one table whose column (organization_id, team_id) is id,
// oldest first.
func pageOf(ctx context.Context, db *gorm.DB, column, id string, p org.Page, rows any) error {
	return db.WithContext(ctx).Where(column+" = ?", id).Order("created_at, id").
		Offset(p.Offset).Limit(p.Limit).Find(rows).Error
}

// mapAll converts every row with f.
func mapAll[M, D any](rows []M, f func(M) D) []D {
	out := make([]D, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}
