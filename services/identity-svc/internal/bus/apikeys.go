package bus

import (
	"context"
	"log/slog"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/motionstudio/platform/pkg/natsx"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
)

// ForgetRevokedKeys calls forget with the id of every API key revoked through any replica,
// until ctx is done. Every replica subscribes (core NATS, no durable), so a key revoked
// through any replica stops validating everywhere.
func ForgetRevokedKeys(ctx context.Context, b *natsx.Bus, log *slog.Logger, forget func(apiKeyID string)) error {
	return everyProcess(ctx, b, log, events.SubjectApiKeyRevoked, func(ev *identityv1.ApiKeyRevoked) { forget(ev.GetApiKeyId()) })
}

// ForgetTenantKeys calls forget with the id of every tenant whose status a platform admin
// changed through any replica, until ctx is done, in the same way: a suspended tenant's keys
// stop validating everywhere, and a reactivated tenant's validate again.
func ForgetTenantKeys(ctx context.Context, b *natsx.Bus, log *slog.Logger, forget func(tenantID string)) error {
	return everyProcess(ctx, b, log, events.SubjectTenantStatusChanged, func(ev *identityv1.TenantStatusChanged) { forget(ev.GetTenantId()) })
}

// everyProcess hands each event on subject to handle until ctx is done, through a core NATS
// subscription of this process; undecodable events are logged and skipped.
func everyProcess[T any, P interface {
	*T
	proto.Message
}](ctx context.Context, b *natsx.Bus, log *slog.Logger, subject string, handle func(P)) error {
	sub, err := b.Conn().Subscribe(b.Subject(subject), func(m *nats.Msg) {
		ev := P(new(T))
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(m.Data, ev); err != nil {
			log.WarnContext(ctx, "undecodable event", "subject", subject, "error", err)
			return
		}
		handle(ev)
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	return sub.Unsubscribe()
}
