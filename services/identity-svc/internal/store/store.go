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

// AccountChanges hears of this process's writes to the users and tenants tables as each write
// returns, committed or not, so that a cache of them (internal/cache) drops what it holds
// before the database's notification reaches it. A write that joins a caller's transaction
// (Quests built over outbox.Once's) is heard before that transaction commits; the
// notification, sent at commit, covers it.
type AccountChanges interface {
	UserChanged(userID string)
	TenantChanged(tenantID string)
}

// heard is c, or one that hears nothing when c is nil (the operator CLI keeps no cache).
func heard(c AccountChanges) AccountChanges {
	if c == nil {
		return unheard{}
	}
	return c
}

type unheard struct{}

func (unheard) UserChanged(string)   {}
func (unheard) TenantChanged(string) {}
