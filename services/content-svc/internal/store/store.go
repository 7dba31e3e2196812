// Package store persists the content service's records in PostgreSQL through gorm and holds
// its embedded migrations.
package store

import (
	"context"
	"embed"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the service's own schema migrations.
var Migrations = pgdb.Embedded("content", migrationFiles, "migrations")

// Catalog implements catalog.Store.
type Catalog struct{ db *gorm.DB }

// NewCatalog returns a Catalog store.
func NewCatalog(db *gorm.DB) *Catalog { return &Catalog{db: db} }

type tagModel struct {
	ID   string `gorm:"primaryKey"`
	Slug string
	Name string
}

func (tagModel) TableName() string { return "tags" }

func (m tagModel) toDomain() catalog.Tag { return catalog.Tag{ID: m.ID, Slug: m.Slug, Name: m.Name} }

// Tags lists every tag ordered by name.
func (s *Catalog) Tags(ctx context.Context) ([]catalog.Tag, error) {
	var rows []tagModel
	if err := s.db.WithContext(ctx).Order("name, id").Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "tag")
	}
	tags := make([]catalog.Tag, len(rows))
	for i, r := range rows {
		tags[i] = r.toDomain()
	}
	return tags, nil
}
