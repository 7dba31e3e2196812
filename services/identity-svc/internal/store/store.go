// Package store persists the identity service's records in PostgreSQL through gorm and holds
// its embedded migrations.
package store

import (
	"embed"

	"github.com/motionstudio/platform/pkg/pgdb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the service's own schema migrations.
var Migrations = pgdb.Embedded("identity", migrationFiles, "migrations")
