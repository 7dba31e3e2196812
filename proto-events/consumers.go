package events

import "slices"

// Names of the readers that run in every process of a service instead of one durable shared by
// its replicas, because each replica needs every message.
const (
	// ReaderSessionRevocations follows identity.session.revoked.v1 in content-svc and
	// agentteam-svc (pkg/revocation, an ordered consumer replaying the last hour at start).
	ReaderSessionRevocations = "session_revocations"
	// ReaderAPIKeyRevocations follows identity.api_key.revoked.v1 in identity-svc to drop a
	// revoked key from the process's cache (a core NATS subscription).
	ReaderAPIKeyRevocations = "api_key_revocations" // #nosec G101 -- a consumer name, not a credential
	// ReaderTenantRevocations follows identity.tenant.status_changed.v1 in content-svc and
	// agentteam-svc (pkg/revocation, beside ReaderSessionRevocations) to refuse the access
	// tokens of a suspended or cancelled tenant.
	ReaderTenantRevocations = "tenant_revocations"
	// ReaderTenantKeys follows identity.tenant.status_changed.v1 in identity-svc to drop the
	// tenant's keys from the process's API-key cache (a core NATS subscription).
	ReaderTenantKeys = "tenant_api_keys"
)

// Delivery says how the processes of a service share a consumer's messages.
type Delivery string

// Deliveries of consumers.
const (
	// DeliveryDurable is a durable pull consumer shared by the service's replicas: each
	// message is handled once per service, acknowledged after its effect commits.
	DeliveryDurable Delivery = "durable"
	// DeliveryEveryProcess hands every message to every process of the service (an ordered
	// consumer or a core NATS subscription); nothing is acknowledged.
	DeliveryEveryProcess Delivery = "every_process"
)

// Consumer is one reader of catalogue subjects inside the platform.
type Consumer struct {
	// Name is the durable's name (the Durable* constants) or, for a reader in every process,
	// one of the Reader* constants.
	Name string
	// Service is the consuming service.
	Service  string
	Delivery Delivery
	// Stream is the stream read, empty for a core NATS subscription.
	Stream string
	// Filter is the subject filter, without the bus prefix.
	Filter string
	// Subjects are the catalogue subjects the consumer acts on; it acknowledges the other
	// messages its filter lets through without an effect.
	Subjects []string
	// Summary says what the consumer does with a message.
	Summary string
}

// Handles reports whether the consumer acts on messages of subject.
func (c Consumer) Handles(subject string) bool { return slices.Contains(c.Subjects, subject) }

// Consumers returns every reader of catalogue subjects inside the platform, in a stable order.
// The slice is built on each call, so callers may keep or change it.
func Consumers() []Consumer {
	var webhookSubjects []string
	for _, e := range Catalogue() {
		if e.WebhookEvent != "" {
			webhookSubjects = append(webhookSubjects, e.Subject)
		}
	}
	revocations := func(service string) []Consumer {
		return []Consumer{{
			Name: ReaderSessionRevocations, Service: service, Delivery: DeliveryEveryProcess,
			Stream: StreamIdentityEvents, Filter: SubjectSessionRevoked, Subjects: []string{SubjectSessionRevoked},
			Summary: "Refuses the revoked session's access tokens (claim sid) with 401 session_revoked until deny_until.",
		}, {
			Name: ReaderTenantRevocations, Service: service, Delivery: DeliveryEveryProcess,
			Stream: StreamIdentityEvents, Filter: SubjectTenantStatusChanged, Subjects: []string{SubjectTenantStatusChanged},
			Summary: "Refuses the access tokens of a suspended or cancelled tenant (claim tid) issued before tokens_not_before with 401 session_revoked until deny_until.",
		}}
	}
	consumers := []Consumer{
		{
			Name: DurableWebhookFanout, Service: ServiceIdentity, Delivery: DeliveryDurable,
			Stream: StreamIdentityEvents, Filter: "identity.>", Subjects: webhookSubjects,
			Summary: "Queues one webhook delivery for each webhook of the event's tenant subscribed to its webhook event name.",
		},
		{
			Name: DurableQuestProgress, Service: ServiceIdentity, Delivery: DeliveryDurable,
			Stream: StreamIdentityEvents, Filter: "identity.>",
			Subjects: []string{SubjectUserRegistered, SubjectPaymentConfirmed, SubjectPlanActivated},
			Summary:  "Advances the user's quests that count the event.",
		},
		{
			Name: ReaderAPIKeyRevocations, Service: ServiceIdentity, Delivery: DeliveryEveryProcess,
			Filter: SubjectApiKeyRevoked, Subjects: []string{SubjectApiKeyRevoked},
			Summary: "Drops the revoked key from the process's API-key cache, so it stops validating on every replica.",
		},
		{
			Name: ReaderTenantKeys, Service: ServiceIdentity, Delivery: DeliveryEveryProcess,
			Filter: SubjectTenantStatusChanged, Subjects: []string{SubjectTenantStatusChanged},
			Summary: "Drops the tenant's keys from the process's API-key cache, so a suspended tenant's keys stop validating, and a reactivated one's validate again, on every replica.",
		},
		{
			Name: DurableWebhookDelivery, Service: ServiceIdentity, Delivery: DeliveryDurable,
			Stream: StreamJobs, Filter: SubjectWebhookDeliveryJob, Subjects: []string{SubjectWebhookDeliveryJob},
			Summary: "Claims the delivery row, posts the signed event to the webhook and records the attempt.",
		},
		{
			Name: DurableSvgPreviewWorker, Service: ServiceContent, Delivery: DeliveryDurable,
			Stream: StreamJobs, Filter: SubjectSvgPreviewJob, Subjects: []string{SubjectSvgPreviewJob},
			Summary: "Claims the preview row, generates the SVG, stores it and publishes content.svg_preview.generated.v1.",
		},
	}
	consumers = append(consumers, revocations(ServiceContent)...)
	consumers = append(consumers, Consumer{
		Name: DurableAgentRunWorker, Service: ServiceAgentteam, Delivery: DeliveryDurable,
		Stream: StreamJobs, Filter: SubjectAgentRunJob, Subjects: []string{SubjectAgentRunJob},
		Summary: "Claims the agent job, runs the seat's agent against its model connection and publishes agentteam.run.completed.v1 or agentteam.run.failed.v1.",
	})
	return append(consumers, revocations(ServiceAgentteam)...)
}

// Durable returns the durable consumer named name (a Durable* constant), and false when there
// is none.
func Durable(name string) (Consumer, bool) {
	cs := Consumers()
	i := slices.IndexFunc(cs, func(c Consumer) bool { return c.Delivery == DeliveryDurable && c.Name == name })
	if i < 0 {
		return Consumer{}, false
	}
	return cs[i], true
}
