package natsx

import (
	"context"
	"fmt"

	events "github.com/motionstudio/platform/proto-events"
)

// EnsureStreams creates or updates the named streams of the event catalogue (the ones a
// service publishes into) under the retention limits and replicas of the bus's configuration.
// A name the catalogue does not list is an error.
func (b *Bus) EnsureStreams(ctx context.Context, names ...string) error {
	streams := map[string]events.Stream{}
	for _, s := range events.Streams() {
		streams[s.Name] = s
	}
	for _, name := range names {
		s, ok := streams[name]
		if !ok {
			return fmt.Errorf("natsx: stream %s is not in the event catalogue", name)
		}
		if err := b.EnsureStream(ctx, b.StreamSpec(s.Name, s.Subjects, s.Jobs)); err != nil {
			return err
		}
	}
	return nil
}
