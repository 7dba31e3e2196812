package cache

import (
	"context"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
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

// Library is a library.Store that answers list pages from the facts, and whose writes drop
// every kept page when they return, so that this process's next list sees them before their
// notification arrives. The slice it answers, and the items in it, are shared with every other
// reader and must not be written.
type Library struct {
	library.Store
	f *Facts
}

// NewLibrary returns a Library over s.
func NewLibrary(f *Facts, s library.Store) *Library { return &Library{Store: s, f: f} }

// List returns the items of a page of keys (library.Store).
func (l *Library) List(ctx context.Context, q library.Query, p library.Page) ([]library.Item, error) {
	k := listKey{q, p}
	if items, ok := l.f.lists.Get(k); ok {
		return items, nil
	}
	t := l.f.lists.Ticket()
	items, err := l.Store.List(ctx, q, p)
	if err == nil {
		l.f.lists.Keep(t, k, items)
	}
	return items, err
}

// Insert stores a new item (library.Store).
func (l *Library) Insert(ctx context.Context, it library.Item, e audit.Entry) error {
	defer l.f.lists.Clear()
	return l.Store.Insert(ctx, it, e)
}

// UpsertShared stores shared items (library.Store).
func (l *Library) UpsertShared(ctx context.Context, items []library.Item) ([]library.Item, error) {
	defer l.f.lists.Clear()
	return l.Store.UpsertShared(ctx, items)
}

// SeedShared inserts shared items whose identity is free (library.Store).
func (l *Library) SeedShared(ctx context.Context, items []library.Item) error {
	defer l.f.lists.Clear()
	return l.Store.SeedShared(ctx, items)
}

// Update changes an organization's item (library.Store).
func (l *Library) Update(ctx context.Context, kind library.Kind, organizationID, key, version string, notFound error,
	fn func(*library.Item) (audit.Entry, error)) (library.Item, error) {
	defer l.f.lists.Clear()
	return l.Store.Update(ctx, kind, organizationID, key, version, notFound, fn)
}

// Delete removes the items (library.Store).
func (l *Library) Delete(ctx context.Context, ids []string) error {
	defer l.f.lists.Clear()
	return l.Store.Delete(ctx, ids)
}
