package cache

import (
	"context"

	"github.com/motionstudio/platform/services/content-svc/internal/site"
)

// Ratings is a site.Store whose comment decisions return once the catalog's index applied
// them: approving a rated comment recomputes its container's rating, which cards show and sort
// by, so this process shows it at once rather than when the notification arrives.
type Ratings struct {
	site.Store
	Catalog *Catalog
}

// DecideComment decides the comment through the wrapped Store, then waits for the catalog's
// index when it succeeded. It returns the Store's errors.
func (r Ratings) DecideComment(ctx context.Context, id, status string) (site.Comment, error) {
	c, err := r.Store.DecideComment(ctx, id, status)
	if err == nil {
		r.Catalog.Sync(ctx)
	}
	return c, err
}
