// Package catalog holds the template catalog's records and rules: tags, categories, containers
// and their projects.
package catalog

import "context"

// Tag labels templates for filtering.
type Tag struct {
	ID   string
	Slug string
	Name string
}

// Store persists catalog records.
type Store interface {
	Tags(ctx context.Context) ([]Tag, error)
}

// Service implements the catalog's rules over a Store.
type Service struct{ store Store }

// NewService returns a Service.
func NewService(store Store) *Service { return &Service{store: store} }

// Tags lists every tag ordered by name.
func (s *Service) Tags(ctx context.Context) ([]Tag, error) { return s.store.Tags(ctx) }
