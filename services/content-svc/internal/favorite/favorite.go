// Package favorite holds users' favorite templates and the folders they sort them into. Every
// record belongs to one user (the token's subject) and is seen and changed only by that user.
package favorite

import (
	"context"
	"time"

	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// Limits of a user's favorites.
const (
	MaxFolders = 200
)

// Folder groups a user's favorites.
type Folder struct {
	ID          string
	UserID      string
	Name        string
	Description string
	ItemCount   int
	CreatedAt   time.Time
}

// Favorite is a template a user keeps, optionally in a folder, with a note.
type Favorite struct {
	UserID      string
	ContainerID string
	FolderID    *string
	Note        string
	CreatedAt   time.Time
}

// Item is a favorite with the template's catalog card.
type Item struct {
	Favorite
	Template catalog.TemplateCard
}

// Page is one page of a user's favorites and how many there are in all.
type Page struct {
	Items    []Item
	Total    int
	Page     int
	PageSize int
}

// HasMore reports whether pages follow this one.
func (p Page) HasMore() bool { return p.Page*p.PageSize < p.Total }

// Store persists favorites. Every method is scoped to one user: another user's folder is
// apperr NotFound.
type Store interface {
	Folders(ctx context.Context, userID string) ([]Folder, error)
	CreateFolder(ctx context.Context, f Folder, maxFolders int) error
	Favorites(ctx context.Context, userID string, folderID *string, page, pageSize int) ([]Item, int, error)
	Add(ctx context.Context, f Favorite) (Favorite, error)
	Remove(ctx context.Context, userID, containerID string) error
}

// Service implements the favorites' rules over a Store.
type Service struct {
	store Store
	now   func() time.Time
	newID func() string
}

// NewService returns a Service; now tells the time and newID makes record ids (UUID v7 in
// production).
func NewService(store Store, now func() time.Time, newID func() string) *Service {
	return &Service{store: store, now: now, newID: newID}
}

// Folders lists a user's folders, oldest first, with the number of their favorites still in the
// catalog.
func (s *Service) Folders(ctx context.Context, userID string) ([]Folder, error) {
	return s.store.Folders(ctx, userID)
}

// CreateFolder creates a folder for a user. It answers apperr Invalid for a blank or long name
// or a long description, and apperr Conflict for a name the user already has (ignoring case) or
// past MaxFolders folders.
func (s *Service) CreateFolder(ctx context.Context, userID, name, description string) (Folder, error) {
	var c check.Checker
	c.Required("name", &name, 100)
	c.Text("description", &description, 1000)
	if err := c.Err(); err != nil {
		return Folder{}, err
	}
	f := Folder{ID: s.newID(), UserID: userID, Name: name, Description: description, CreatedAt: s.now().UTC()}
	return f, s.store.CreateFolder(ctx, f, MaxFolders)
}

// Favorites answers one page of a user's favorites still in the catalog, newest first,
// optionally of one folder. It answers apperr Invalid for a bad page or page size and apperr
// NotFound for a folder that is not the user's.
func (s *Service) Favorites(ctx context.Context, userID string, folderID *string, page, pageSize *int) (Page, error) {
	pg, err := paging.New(page, pageSize)
	if err != nil {
		return Page{}, err
	}
	p := Page{Page: pg.Number, PageSize: pg.Size}
	items, total, err := s.store.Favorites(ctx, userID, folderID, p.Page, p.PageSize)
	p.Items, p.Total = items, total
	return p, err
}

// Add keeps a template in a user's favorites; adding it again moves it to the given folder and
// replaces its note. It answers apperr Invalid for a missing template id or a long note, and apperr NotFound for a
// template not in the catalog or a folder that is not the user's.
func (s *Service) Add(ctx context.Context, f Favorite) (Favorite, error) {
	var c check.Checker
	c.Required("container_id", &f.ContainerID, 36)
	c.Text("note", &f.Note, 1000)
	if err := c.Err(); err != nil {
		return Favorite{}, err
	}
	f.CreatedAt = s.now().UTC()
	return s.store.Add(ctx, f)
}

// Remove takes a template out of a user's favorites. It answers apperr NotFound when it is not
// one of them.
func (s *Service) Remove(ctx context.Context, userID, containerID string) error {
	return s.store.Remove(ctx, userID, containerID)
}
