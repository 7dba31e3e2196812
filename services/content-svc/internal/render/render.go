// Package render holds the render servers that projects are rendered on.
package render

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/pkg/check"
)

// Server is a render server.
type Server struct {
	ID                 string
	Name               string
	BaseURL            string
	Region             string
	IsActive           bool
	MaxParallelRenders int
	CreatedAt          time.Time
}

// Change lists the fields of a server to change; nil fields keep their value.
type Change struct {
	Name               *string
	BaseURL            *string
	Region             *string
	IsActive           *bool
	MaxParallelRenders *int
}

// Store persists render servers.
type Store interface {
	Servers(ctx context.Context) ([]Server, error)
	Server(ctx context.Context, id string) (Server, error)
	CreateServer(ctx context.Context, s Server) error
	UpdateServer(ctx context.Context, id string, fn func(*Server) error) (Server, error)
	DeleteServer(ctx context.Context, id string) error
}

// Service implements the render-server rules over a Store.
type Service struct{ store Store }

// NewService returns a Service.
func NewService(store Store) *Service { return &Service{store: store} }

// Servers lists every render server ordered by name.
func (s *Service) Servers(ctx context.Context) ([]Server, error) { return s.store.Servers(ctx) }

// Server returns one render server. It returns NotFound for an unknown id.
func (s *Service) Server(ctx context.Context, id string) (Server, error) {
	return s.store.Server(ctx, id)
}

// Create registers a server. It returns Invalid for bad fields and Conflict when the name is
// taken.
func (s *Service) Create(ctx context.Context, srv Server) (Server, error) {
	srv.Name, srv.Region = strings.TrimSpace(srv.Name), strings.TrimSpace(srv.Region)
	if err := validate(srv); err != nil {
		return Server{}, err
	}
	srv.ID = uuid.Must(uuid.NewV7()).String()
	srv.CreatedAt = time.Now().UTC()
	if err := s.store.CreateServer(ctx, srv); err != nil {
		return Server{}, err
	}
	return srv, nil
}

// Update applies c to the server. It returns NotFound for an unknown id, Invalid for bad
// fields and Conflict when the new name is taken.
func (s *Service) Update(ctx context.Context, id string, c Change) (Server, error) {
	return s.store.UpdateServer(ctx, id, func(srv *Server) error {
		if c.Name != nil {
			srv.Name = strings.TrimSpace(*c.Name)
		}
		if c.BaseURL != nil {
			srv.BaseURL = *c.BaseURL
		}
		if c.Region != nil {
			srv.Region = strings.TrimSpace(*c.Region)
		}
		if c.IsActive != nil {
			srv.IsActive = *c.IsActive
		}
		if c.MaxParallelRenders != nil {
			srv.MaxParallelRenders = *c.MaxParallelRenders
		}
		return validate(*srv)
	})
}

// Delete removes the server; projects that pointed at it keep no server. It returns NotFound
// for an unknown id.
func (s *Service) Delete(ctx context.Context, id string) error { return s.store.DeleteServer(ctx, id) }

func validate(srv Server) error {
	var c check.Checker
	c.Length("name", srv.Name, 1, 100)
	c.URL("base_url", srv.BaseURL, true)
	c.Length("region", srv.Region, 0, 100)
	c.Between("max_parallel_renders", &srv.MaxParallelRenders, 1, 1000)
	return c.Err()
}
