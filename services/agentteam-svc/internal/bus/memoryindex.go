// Package bus connects agent-team domain services to NATS: publishers and consumers that
// translate between the domain and messages.
package bus

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/motionstudio/platform/pkg/natsx"
)

// SubjectMemoryChanged carries "team T's memory reached version V" between replicas (core
// NATS, every replica receives every notice). It is a cache hint, not a platform event: a lost
// notice is healed by the version check before each search, so it needs neither the outbox
// nor JetStream, and its subject lies outside every stream's filter (agentteam.> is
// AGENTTEAM_EVENTS) so no stream stores it.
const SubjectMemoryChanged = "notices.agentteam.memory.changed"

// memoryChanged is the notice's JSON body.
type memoryChanged struct {
	TeamID  string `json:"teamId"`
	Version int64  `json:"version"`
}

// MemoryNotices publishes and receives memory change notices.
type MemoryNotices struct {
	bus *natsx.Bus
	log *slog.Logger
}

// NewMemoryNotices returns a MemoryNotices on bus.
func NewMemoryNotices(bus *natsx.Bus, log *slog.Logger) *MemoryNotices {
	return &MemoryNotices{bus: bus, log: log}
}

// Changed implements memory.Notifier; a failure is logged, never returned.
func (n *MemoryNotices) Changed(_ context.Context, teamID string, version int64) {
	body, _ := json.Marshal(memoryChanged{TeamID: teamID, Version: version})
	if err := n.bus.Conn().Publish(n.bus.Subject(SubjectMemoryChanged), body); err != nil {
		n.log.Warn("memory change notice not sent", "team_id", teamID, "version", version, "error", err)
	}
}

// Refresher brings a team's in-memory vectors up to a version.
type Refresher interface {
	RefreshTeam(ctx context.Context, teamID string, version int64) error
}

// Listen applies every notice to r until ctx is done.
func (n *MemoryNotices) Listen(ctx context.Context, r Refresher) error {
	sub, err := n.bus.Conn().Subscribe(n.bus.Subject(SubjectMemoryChanged), func(m *nats.Msg) {
		var c memoryChanged
		if err := json.Unmarshal(m.Data, &c); err != nil || c.TeamID == "" {
			n.log.Warn("malformed memory change notice ignored", "error", err)
			return
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := r.RefreshTeam(rctx, c.TeamID, c.Version); err != nil {
			n.log.Warn("memory index refresh failed; the next search retries", "team_id", c.TeamID, "error", err)
		}
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	return sub.Unsubscribe()
}
