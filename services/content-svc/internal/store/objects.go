package store

import (
	"context"
	"io"

	"github.com/motionstudio/platform/pkg/blob"
)

// Objects adapts the blob store to the object interfaces the domain packages declare.
type Objects struct{ *blob.Store }

// NewObjects returns an Objects over s.
func NewObjects(s *blob.Store) *Objects { return &Objects{Store: s} }

// URL is where anonymous clients read the public object at key (previews, fonts, images): the
// blob store's public base URL.
func (o *Objects) URL(key string) string { return o.Store.PublicURL(key) }

// Put streams r into the object at key. It returns the blob store's errors.
func (o *Objects) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	_, err := o.Store.Put(ctx, key, r, size, contentType)
	return err
}
