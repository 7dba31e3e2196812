package bus

import (
	"context"
	"fmt"

	"github.com/motionstudio/platform/pkg/natsx"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/quest"
)

// QuestRecorder records a quest step, once per consumer and event id however often the event
// is delivered (quest.Service).
type QuestRecorder interface {
	RecordOnce(ctx context.Context, consumer, eventID string, step quest.Step) error
}

// ConsumeQuestSteps moves quests from identity events until ctx is done, recording each
// event's step once with record.
// The consumer reads every identity event (one filter subject, which every NATS server version
// supports) and acknowledges the ones quests do not count; the catalogue's consumer entry
// names both. A quest's trigger is the event's webhook name (user.registered,
// payment.confirmed, plan.activated).
func ConsumeQuestSteps(ctx context.Context, b *natsx.Bus, record QuestRecorder) error {
	c, ok := events.Durable(events.DurableQuestProgress)
	if !ok {
		return fmt.Errorf("bus: %s is not in the consumer catalogue", events.DurableQuestProgress)
	}
	spec := natsx.ConsumerSpec{Stream: c.Stream, Durable: c.Name, FilterSubjects: []string{c.Filter}}
	return b.Consume(ctx, spec, func(ctx context.Context, m natsx.Message) error {
		if !c.Handles(m.Subject) {
			return nil
		}
		msg, err := events.Decode(m.Subject, m.Data)
		if err != nil {
			return natsx.Permanent(err)
		}
		who, ok := msg.(interface {
			GetTenantId() string
			GetUserId() string
		})
		entry, _ := events.Lookup(m.Subject)
		if !ok || who.GetUserId() == "" {
			return natsx.Permanent(fmt.Errorf("bus: %s event %s names no user", m.Subject, m.ID))
		}
		step := quest.Step{TenantID: who.GetTenantId(), UserID: who.GetUserId(), Trigger: entry.WebhookEvent, At: m.Time}
		return record.RecordOnce(ctx, events.DurableQuestProgress, m.ID, step)
	})
}
