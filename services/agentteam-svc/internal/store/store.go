// Package store persists the agent-team platform's records in PostgreSQL through gorm and
// holds its embedded migrations.
package store

import (
	"embed"
	"errors"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the service's own schema migrations.
var Migrations = pgdb.Embedded("agentteam", migrationFiles, "migrations")

// newID is a new time-ordered row id.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// takeByID reads the row with id into m; a missing row answers notFound() when given, else a
// NotFound naming what.
func takeByID(db *gorm.DB, id string, m any, what string, notFound func() error) error {
	err := db.Where("id = ?", id).Take(m).Error
	if notFound != nil && errors.Is(err, gorm.ErrRecordNotFound) {
		return notFound()
	}
	return pgdb.Translate(err, what)
}
