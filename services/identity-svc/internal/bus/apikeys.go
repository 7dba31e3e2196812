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

// ForgetRevokedKeys calls forget with the id of every API key revoked through any replica,
// until ctx is done. Every replica subscribes (core NATS, no durable), so a key revoked
// through any replica stops validating everywhere.
func ForgetRevokedKeys(ctx context.Context, b *natsx.Bus, log *slog.Logger, forget func(apiKeyID string)) error {
	sub, err := b.Conn().Subscribe(b.Subject(events.SubjectApiKeyRevoked), func(m *nats.Msg) {
		var ev identityv1.ApiKeyRevoked
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(m.Data, &ev); err != nil {
			log.WarnContext(ctx, "undecodable api key revocation", "error", err)
			return
		}
		forget(ev.GetApiKeyId())
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	return sub.Unsubscribe()
}
