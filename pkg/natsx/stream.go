package natsx

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamSpec describes a file-backed JetStream stream. Name and Subjects are given without
// the bus prefix.
type StreamSpec struct {
	Name     string
	Subjects []string
	// MaxAge drops messages older than this; zero keeps them until the stream is full.
	MaxAge time.Duration
	// Duplicates is the window in which a repeated Nats-Msg-Id is dropped; zero is the
	// server's default (two minutes).
	Duplicates time.Duration
}

// EnsureStream creates the stream or updates it to match s, with the bus prefix applied to
// its name and subjects. It returns the server's error (an Internal kind) when the stream
// cannot be created or the update is not allowed.
func (b *Bus) EnsureStream(ctx context.Context, s StreamSpec) error {
	subjects := make([]string, len(s.Subjects))
	for i, subj := range s.Subjects {
		subjects[i] = b.Subject(subj)
	}
	_, err := b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       b.StreamName(s.Name),
		Subjects:   subjects,
		Retention:  jetstream.LimitsPolicy,
		Storage:    jetstream.FileStorage,
		MaxAge:     s.MaxAge,
		Duplicates: s.Duplicates,
	})
	if err != nil {
		return fmt.Errorf("natsx: ensure stream %s: %w", s.Name, err)
	}
	return nil
}
