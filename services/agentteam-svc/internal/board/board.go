// Package board holds the work board: work items, their columns and who they are assigned to.
package board

import "context"

// Store persists work items.
type Store interface {
	AssignedTo(ctx context.Context, kind, assigneeID string, limit int) ([]WorkItem, error)
}

// Service implements the board's rules over a Store.
type Service struct{ store Store }

// NewService returns a Service.
func NewService(store Store) *Service { return &Service{store: store} }

// CartableLimit caps the cartable: a member's open work fits comfortably, a runaway list does not.
const CartableLimit = 500

// Cartable lists the work items assigned to the member, most recently updated first.
func (s *Service) Cartable(ctx context.Context, memberID string) ([]WorkItem, error) {
	return s.store.AssignedTo(ctx, AssigneeMember, memberID, CartableLimit)
}
