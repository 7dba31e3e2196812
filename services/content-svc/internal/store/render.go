package store

import (
	"context"
	"time"

	"gorm.io/gorm"

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
}

func (projectServerModel) TableName() string { return "project_servers" }

func (m projectServerModel) toDomain() render.Server {
	return render.Server{
		ID: m.ID, Name: m.Name, BaseURL: m.BaseURL, Region: m.Region, IsActive: m.IsActive,
		MaxParallelRenders: m.MaxParallelRenders, CreatedAt: m.CreatedAt,
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
