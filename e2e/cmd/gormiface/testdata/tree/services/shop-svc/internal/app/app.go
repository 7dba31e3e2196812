// Package app wires the test workspace: it may import everything.
package app

import (
	"github.com/motionstudio/platform/services/shop-svc/internal/bus"
	"github.com/motionstudio/platform/services/shop-svc/internal/httpapi/orderapi"
	"github.com/motionstudio/platform/services/shop-svc/internal/outbound/mailer"
	"github.com/motionstudio/platform/services/shop-svc/internal/outbound/texter"
	"github.com/motionstudio/platform/services/shop-svc/internal/store"
)

// App is everything.
type App struct {
	Orders   store.Orders
	Handler  orderapi.Handler
	Enqueuer bus.Enqueuer
	Mailer   mailer.Mailer
	Texter   texter.Texter
}
