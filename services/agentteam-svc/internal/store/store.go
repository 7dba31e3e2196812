// Package store persists the agent-team platform's records in PostgreSQL through gorm and
// holds its embedded migrations.
package store

import (
	"context"
	"embed"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the service's own schema migrations.
var Migrations = pgdb.Embedded("agentteam", migrationFiles, "migrations")

// Board implements board.Store.
type Board struct{ db *gorm.DB }

// NewBoard returns a Board store.
func NewBoard(db *gorm.DB) *Board { return &Board{db: db} }

type workItemModel struct {
	ID           string `gorm:"primaryKey"`
	TeamID       string
	Title        string
	Description  string
	Type         string
	Status       string
	AssigneeKind *string
	AssigneeID   *string
	ParentID     *string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (workItemModel) TableName() string { return "work_items" }

func (m workItemModel) toDomain() board.WorkItem {
	return board.WorkItem{
		ID: m.ID, TeamID: m.TeamID, Title: m.Title, Description: m.Description, Type: m.Type, Status: m.Status,
		AssigneeKind: m.AssigneeKind, AssigneeID: m.AssigneeID, ParentID: m.ParentID,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

// AssignedTo lists the work items assigned to (kind, id), most recently updated first.
func (s *Board) AssignedTo(ctx context.Context, kind, assigneeID string, limit int) ([]board.WorkItem, error) {
	var rows []workItemModel
	err := s.db.WithContext(ctx).
		Where("assignee_kind = ? AND assignee_id = ?", kind, assigneeID).
		Order("updated_at DESC, id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "work item")
	}
	items := make([]board.WorkItem, len(rows))
	for i, r := range rows {
		items[i] = r.toDomain()
	}
	return items, nil
}
