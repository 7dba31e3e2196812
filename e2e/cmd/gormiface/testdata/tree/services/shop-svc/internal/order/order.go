// Package order is the domain of the test workspace.
package order

// Order is an order.
type Order struct{ ID string }

// Store keeps orders.
type Store interface {
	Get(id string) (Order, error)
}
