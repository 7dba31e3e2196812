// Package render holds the render servers that projects are rendered on.
package render

import (
	"context"
	"time"
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

// Store persists render servers.
type Store interface {
	Servers(ctx context.Context) ([]Server, error)
}

// Service implements the render-server rules over a Store.
type Service struct{ store Store }

// NewService returns a Service.
func NewService(store Store) *Service { return &Service{store: store} }

// Servers lists every render server ordered by name.
func (s *Service) Servers(ctx context.Context) ([]Server, error) { return s.store.Servers(ctx) }
