package cache

import (
	"context"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
)

// Board is a board.Store whose task writes drop their team's cached board version when they
// return, so that this process's next board read sees them before their notification arrives.
type Board struct {
	board.Store
	f *Facts
}

// NewBoard returns a Board over s.
func NewBoard(f *Facts, s board.Store) *Board { return &Board{Store: s, f: f} }

// CreateTask inserts the task (board.Store).
func (b *Board) CreateTask(ctx context.Context, w board.WorkItem, e audit.Entry) error {
	defer b.f.teams.Delete(w.TeamID)
	return b.Store.CreateTask(ctx, w, e)
}

// MoveTask moves the task (board.Store).
func (b *Board) MoveTask(ctx context.Context, id string, decide func(board.WorkItem) (board.Move, error)) (board.WorkItem, bool, error) {
	item, handedOff, err := b.Store.MoveTask(ctx, id, decide)
	if item.TeamID != "" {
		b.f.teams.Delete(item.TeamID)
	}
	return item, handedOff, err
}

// UpdateTask changes the task (board.Store).
func (b *Board) UpdateTask(ctx context.Context, id string, change func(*board.WorkItem) (audit.Entry, error)) (board.WorkItem, error) {
	item, err := b.Store.UpdateTask(ctx, id, change)
	if item.TeamID != "" {
		b.f.teams.Delete(item.TeamID)
	}
	return item, err
}
