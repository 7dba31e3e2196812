// Package orderapi serves orders; it may import its adapter's shared helpers.
package orderapi

import (
	"github.com/motionstudio/platform/services/shop-svc/internal/httpapi"
	"github.com/motionstudio/platform/services/shop-svc/internal/order"
)

// Handler serves orders.
type Handler struct{ Orders order.Store }

// Header is the header of every answer.
func (Handler) Header() string { return httpapi.Header }
