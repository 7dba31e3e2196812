package natsx

import (
	"context"
	"fmt"
	"slices"

	events "github.com/motionstudio/platform/proto-events"
)

// EnsureStreams creates or updates the named streams of the event catalogue (the ones a
// service publishes into) under the retention limits and replicas of the bus's configuration.
// A name the catalogue does not list is an error.
func (b *Bus) EnsureStreams(ctx context.Context, names ...string) error {
	streams := events.Streams()
	for _, name := range names {
		i := slices.IndexFunc(streams, func(s events.Stream) bool { return s.Name == name })
		if i < 0 {
			return fmt.Errorf("natsx: stream %s is not in the event catalogue", name)
		}
		if err := b.EnsureStream(ctx, b.StreamSpec(name, streams[i].Subjects, streams[i].Jobs)); err != nil {
			return err
		}
	}
	return nil
}
