// Package store is the Postgres adapter of the test workspace; it may name gorm types.
package store

import (
	"gorm.io/gorm"

	"github.com/motionstudio/platform/services/shop-svc/internal/order"
)

// Tx is a transaction.
type Tx = *gorm.DB

// Runner runs a function in a transaction.
type Runner interface {
	InTx(fn func(tx *gorm.DB) error) error
}

// Orders implements order.Store.
type Orders struct{ db *gorm.DB }

var _ order.Store = Orders{}

// Get returns an order.
func (o Orders) Get(id string) (order.Order, error) { return order.Order{ID: id}, nil }
