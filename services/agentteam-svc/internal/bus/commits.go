package bus

import (
	"context"

	"github.com/motionstudio/platform/pkg/outbox"
)

// CommitRelay answers each commit of outbox rows, on any replica, with relay passes, so that
// run wake-ups and events go out as their transactions commit. The database listener tells
// it of the commits.
type CommitRelay struct {
	relay     *outbox.Relay
	batch     int
	committed chan struct{}
}

// NewCommitRelay returns a CommitRelay whose relay publishes at most batch rows a pass.
func NewCommitRelay(relay *outbox.Relay, batch int) *CommitRelay {
	return &CommitRelay{relay: relay, batch: batch, committed: make(chan struct{}, 1)}
}

// Committed tells of a commit of outbox rows; it never blocks, and the commits told during a
// pass make one more pass.
func (c *CommitRelay) Committed() {
	select {
	case c.committed <- struct{}{}:
	default:
	}
}

// Run makes relay passes after each commit until a pass publishes less than a full batch,
// until ctx is done. A failing pass is left to the relay's own loop, which logs it and retries
// with backoff.
func (c *CommitRelay) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.committed:
		}
		for {
			n, err := c.relay.Flush(ctx)
			if err != nil || n < c.batch {
				break
			}
		}
	}
}
