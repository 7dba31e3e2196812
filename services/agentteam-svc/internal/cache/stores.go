package cache

import (
	"context"
	"strings"

	"github.com/motionstudio/platform/pkg/bounded"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
)

// BoardPages bounds the board pages a Board keeps, least recently used out first: at most 100
// tasks a column, four columns, so a few hundred kilobytes a page at most.
const BoardPages = 128

// pageKey names one page of a team's board at one board version. The version changes with
// every write to the team's tasks (on any replica), so a newer board has a newer key.
type pageKey struct {
	team, statuses string
	version        int64
	offset, limit  int
}

// Board is a board.Store that answers board pages (Columns) from memory while the team's board
// version in the facts is the one they were read at, and whose task writes drop their team's
// board version when they return, so that this process's next board read sees them before
// their notification arrives. A team whose version the facts do not hold (read by the access
// check of the same request; nothing is held while the listener does not listen) is read from
// the store.
type Board struct {
	board.Store
	f     *Facts
	pages *bounded.Map[pageKey, []board.Column]
}

// NewBoard returns a Board over s keeping at most pages board pages; 0 keeps none.
func NewBoard(f *Facts, s board.Store, pages int) *Board {
	return &Board{Store: s, f: f, pages: bounded.New(bounded.Options[pageKey, []board.Column]{Max: pages})}
}

// Columns returns the page of the team's columns (board.Store). The columns are shared with
// every other reader and must not be written.
func (b *Board) Columns(ctx context.Context, teamID string, statuses []string, offset, limit int) ([]board.Column, error) {
	t, ok := b.f.teams.Get(teamID)
	if !ok {
		return b.Store.Columns(ctx, teamID, statuses, offset, limit)
	}
	// The page read now is at least as new as the version held: keeping it under that version
	// never answers an older board than the facts say.
	k := pageKey{team: teamID, statuses: strings.Join(statuses, ","), version: t.version, offset: offset, limit: limit}
	if cols, ok := b.pages.Get(k); ok {
		return cols, nil
	}
	cols, err := b.Store.Columns(ctx, teamID, statuses, offset, limit)
	if err == nil {
		b.pages.Put(k, cols)
	}
	return cols, err
}

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
