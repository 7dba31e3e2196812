package bus

import (
	"context"
	"log/slog"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/motionstudio/platform/pkg/natsx"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
)

// KeyRevocations tells this process of every API key revoked through any replica.
type KeyRevocations struct {
	bus    *natsx.Bus
	log    *slog.Logger
	forget func(apiKeyID string)
}

// NewKeyRevocations returns the listener that calls forget with each revoked key's id.
func NewKeyRevocations(bus *natsx.Bus, log *slog.Logger, forget func(apiKeyID string)) *KeyRevocations {
	return &KeyRevocations{bus: bus, log: log, forget: forget}
}

// Run listens until ctx is done. Every replica subscribes (core NATS, no durable), so a key
// revoked through any replica stops validating everywhere.
func (k *KeyRevocations) Run(ctx context.Context) error {
	sub, err := k.bus.Conn().Subscribe(k.bus.Subject(events.SubjectApiKeyRevoked), func(m *nats.Msg) {
		var ev identityv1.ApiKeyRevoked
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(m.Data, &ev); err != nil {
			k.log.WarnContext(ctx, "undecodable api key revocation", "error", err)
			return
		}
		k.forget(ev.GetApiKeyId())
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	return sub.Unsubscribe()
}
