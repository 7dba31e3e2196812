package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/content-svc/internal/render"
)

// RenderServers implements render.Store.
type RenderServers struct{ db *gorm.DB }

// NewRenderServers returns a RenderServers store.
func NewRenderServers(db *gorm.DB) *RenderServers { return &RenderServers{db: db} }

type projectServerModel struct {
	ID                 string `gorm:"primaryKey"`
	Name               string
	BaseURL            string
	Region             string
	IsActive           bool
	MaxParallelRenders int
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

func (projectServerModel) TableName() string { return "project_servers" }

func (m projectServerModel) toDomain() render.Server {
	return render.Server{
		ID: m.ID, Name: m.Name, BaseURL: m.BaseURL, Region: m.Region, IsActive: m.IsActive,
		MaxParallelRenders: m.MaxParallelRenders, CreatedAt: m.CreatedAt,
	}
}

func toProjectServerModel(s render.Server) projectServerModel {
	return projectServerModel{
		ID: s.ID, Name: s.Name, BaseURL: s.BaseURL, Region: s.Region, IsActive: s.IsActive,
		MaxParallelRenders: s.MaxParallelRenders, CreatedAt: s.CreatedAt, UpdatedAt: time.Now().UTC(),
	}
}

// Servers lists every render server ordered by name.
func (s *RenderServers) Servers(ctx context.Context) ([]render.Server, error) {
	var rows []projectServerModel
	if err := s.db.WithContext(ctx).Order("name, id").Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "project server")
	}
	out := make([]render.Server, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// Server returns one render server. It returns NotFound for an unknown id.
func (s *RenderServers) Server(ctx context.Context, id string) (render.Server, error) {
	var row projectServerModel
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return render.Server{}, pgdb.Translate(err, "project server")
	}
	return row.toDomain(), nil
}

// CreateServer inserts srv. It returns Conflict when the name is taken.
func (s *RenderServers) CreateServer(ctx context.Context, srv render.Server) error {
	return serverNameTaken(s.db.WithContext(ctx).Create(toProjectServerModel(srv)).Error)
}

// UpdateServer locks the server, applies fn and saves the result. It returns NotFound for an
// unknown id, fn's error, and Conflict when the new name is taken.
func (s *RenderServers) UpdateServer(ctx context.Context, id string, fn func(*render.Server) error) (render.Server, error) {
	var out render.Server
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var row projectServerModel
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&row).Error; err != nil {
			return pgdb.Translate(err, "project server")
		}
		out = row.toDomain()
		if err := fn(&out); err != nil {
			return err
		}
		return serverNameTaken(tx.Save(toProjectServerModel(out)).Error)
	})
	return out, err
}

// DeleteServer deletes the server. It returns NotFound when there is none.
func (s *RenderServers) DeleteServer(ctx context.Context, id string) error {
	return removeFileRow(ctx, s.db, &projectServerModel{}, id, "project server")
}

func serverNameTaken(err error) error {
	if pgdb.IsUniqueViolation(err, "project_servers_name_key") {
		return apperr.E(apperr.Conflict, "name_taken", "a render server with this name already exists")
	}
	return pgdb.Translate(err, "project server")
}
