// Package bus is the NATS adapter of the test workspace.
package bus

import "github.com/motionstudio/platform/services/shop-svc/internal/order"

// Enqueuer queues an order once per event id.
type Enqueuer interface {
	Enqueue(eventID string, o order.Order) error
}
