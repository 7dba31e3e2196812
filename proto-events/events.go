// Package events names the platform's CloudEvents and jobs on NATS JetStream:
// their subjects, the services that produce them, the streams that hold them
// and the proto messages they carry. It also maps the webhook event names
// tenants subscribe to onto identity subjects, and decodes payloads by
// subject.
//
// An event's CloudEvents type is its subject and its payload is the protojson
// encoding of the entry's message. A job is a JetStream message that only
// wakes a worker; the job row in the owning service's database is the truth.
// docs/events.md describes delivery guarantees and headers.
package events

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	agentteamv1 "github.com/motionstudio/platform/proto-events/gen/agentteam/v1"
	contentv1 "github.com/motionstudio/platform/proto-events/gen/content/v1"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
)

// Subjects of events. Each is also the event's CloudEvents type.
const (
	SubjectSvgPreviewGenerated = "content.svg_preview.generated.v1"

	SubjectUserRegistered       = "identity.user.registered.v1"
	SubjectUserBanned           = "identity.user.banned.v1"
	SubjectPaymentConfirmed     = "identity.payment.confirmed.v1"
	SubjectPaymentFailed        = "identity.payment.failed.v1"
	SubjectPaymentRefunded      = "identity.payment.refunded.v1"
	SubjectApiKeyCreated        = "identity.api_key.created.v1"
	SubjectApiKeyRevoked        = "identity.api_key.revoked.v1"
	SubjectTenantUpdated        = "identity.tenant.updated.v1"
	SubjectTenantDomainVerified = "identity.tenant.domain_verified.v1"
	SubjectTenantStatusChanged  = "identity.tenant.status_changed.v1"
	SubjectPlanActivated        = "identity.plan.activated.v1"
	SubjectQuestCompleted       = "identity.quest.completed.v1"
	SubjectSessionRevoked       = "identity.session.revoked.v1"

	SubjectTaskMoved    = "agentteam.task.moved.v1"
	SubjectRunCompleted = "agentteam.run.completed.v1"
	SubjectRunFailed    = "agentteam.run.failed.v1"
)

// Subjects of jobs.
const (
	SubjectSvgPreviewJob      = "jobs.content.svg_preview.generate"
	SubjectAgentRunJob        = "jobs.agentteam.agent.run"
	SubjectWebhookDeliveryJob = "jobs.identity.webhook.deliver"
)

// Services of the platform, the producers and consumers of the catalogue.
const (
	ServiceIdentity  = "identity-svc"
	ServiceContent   = "content-svc"
	ServiceAgentteam = "agentteam-svc"
)

// sourcePrefix turns a service name into its CloudEvents source.
const sourcePrefix = "motionstudio/"

// Sources are the CloudEvents sources (ce-source) of the producing services.
const (
	SourceIdentity  = sourcePrefix + ServiceIdentity
	SourceContent   = sourcePrefix + ServiceContent
	SourceAgentteam = sourcePrefix + ServiceAgentteam
)

// Services returns the platform's services in a stable order.
func Services() []string { return []string{ServiceIdentity, ServiceContent, ServiceAgentteam} }

// Kind tells an event, which records a fact, from a job, which wakes a worker.
type Kind string

// Kinds of catalogue entries.
const (
	KindEvent Kind = "event"
	KindJob   Kind = "job"
)

// Entry describes one subject of the catalogue.
type Entry struct {
	// Subject is the NATS subject, and for events the CloudEvents type.
	Subject string
	Kind    Kind
	// Source is the CloudEvents source of the producing service.
	Source string
	// WebhookEvent is the name tenants subscribe to for this event, or empty
	// when the subject is not delivered to webhooks.
	WebhookEvent string
	// Concern says which tenant or organization the subject's events concern.
	Concern Concern
	// New returns an empty payload message for the subject.
	New func() proto.Message
}

// Producer is the service that publishes on the entry's subject.
func (e Entry) Producer() string { return strings.TrimPrefix(e.Source, sourcePrefix) }

// MessageName is the full name of the entry's proto message, such as
// "motionstudio.identity.v1.UserRegistered".
func (e Entry) MessageName() string { return string(e.New().ProtoReflect().Descriptor().FullName()) }

// DataSchema is the CloudEvents dataschema (ce-dataschema) of the entry's
// events: the payload schema in the producer's AsyncAPI document, named by the
// document's id and a JSON pointer, such as
// "urn:motionstudio:asyncapi:identity-svc#/components/schemas/motionstudio.identity.v1.UserRegistered".
func (e Entry) DataSchema() string {
	return DocumentID(e.Producer()) + "#/components/schemas/" + e.MessageName()
}

// Catalogue returns every subject the platform publishes, events first, in a
// stable order. The slice is built on each call, so callers may keep or
// change it.
func Catalogue() []Entry {
	return []Entry{
		{SubjectSvgPreviewGenerated, KindEvent, SourceContent, "", ConcernRequesterTenant, newOf[contentv1.SvgPreviewGenerated]},

		{SubjectUserRegistered, KindEvent, SourceIdentity, "user.registered", ConcernTenant, newOf[identityv1.UserRegistered]},
		{SubjectUserBanned, KindEvent, SourceIdentity, "user.banned", ConcernTenant, newOf[identityv1.UserBanned]},
		{SubjectPaymentConfirmed, KindEvent, SourceIdentity, "payment.confirmed", ConcernTenant, newOf[identityv1.PaymentConfirmed]},
		{SubjectPaymentFailed, KindEvent, SourceIdentity, "payment.failed", ConcernTenant, newOf[identityv1.PaymentFailed]},
		{SubjectPaymentRefunded, KindEvent, SourceIdentity, "payment.refunded", ConcernTenant, newOf[identityv1.PaymentRefunded]},
		{SubjectApiKeyCreated, KindEvent, SourceIdentity, "api_key.created", ConcernTenant, newOf[identityv1.ApiKeyCreated]},
		{SubjectApiKeyRevoked, KindEvent, SourceIdentity, "api_key.revoked", ConcernTenant, newOf[identityv1.ApiKeyRevoked]},
		{SubjectTenantUpdated, KindEvent, SourceIdentity, "tenant.updated", ConcernTenant, newOf[identityv1.TenantUpdated]},
		{SubjectTenantDomainVerified, KindEvent, SourceIdentity, "tenant.domain_verified", ConcernTenant, newOf[identityv1.TenantDomainVerified]},
		{SubjectTenantStatusChanged, KindEvent, SourceIdentity, "", ConcernTenant, newOf[identityv1.TenantStatusChanged]},
		{SubjectPlanActivated, KindEvent, SourceIdentity, "plan.activated", ConcernTenant, newOf[identityv1.PlanActivated]},
		{SubjectQuestCompleted, KindEvent, SourceIdentity, "quest.completed", ConcernTenant, newOf[identityv1.QuestCompleted]},
		{SubjectSessionRevoked, KindEvent, SourceIdentity, "", ConcernTenant, newOf[identityv1.SessionRevoked]},

		{SubjectTaskMoved, KindEvent, SourceAgentteam, "", ConcernOrganization, newOf[agentteamv1.TaskMoved]},
		{SubjectRunCompleted, KindEvent, SourceAgentteam, "", ConcernOrganization, newOf[agentteamv1.RunCompleted]},
		{SubjectRunFailed, KindEvent, SourceAgentteam, "", ConcernOrganization, newOf[agentteamv1.RunFailed]},

		{SubjectSvgPreviewJob, KindJob, SourceContent, "", ConcernRequesterTenant, newOf[contentv1.SvgPreviewJob]},
		{SubjectAgentRunJob, KindJob, SourceAgentteam, "", ConcernOrganization, newOf[agentteamv1.AgentRunJob]},
		{SubjectWebhookDeliveryJob, KindJob, SourceIdentity, "", ConcernTenant, newOf[identityv1.WebhookDeliveryJob]},
	}
}

// Lookup returns the catalogue entry of subject, and false when the platform
// does not publish on it.
func Lookup(subject string) (Entry, bool) {
	entries := Catalogue()
	i := slices.IndexFunc(entries, func(e Entry) bool { return e.Subject == subject })
	if i < 0 {
		return Entry{}, false
	}
	return entries[i], true
}

// WebhookEvents maps each webhook event name tenants may subscribe to, such
// as "payment.confirmed", to the identity subject whose events are delivered
// under that name. identity-svc validates a webhook's events against its keys.
// The map is built on each call, so callers may keep or change it.
func WebhookEvents() map[string]string {
	names := make(map[string]string)
	for _, e := range Catalogue() {
		if e.WebhookEvent != "" {
			names[e.WebhookEvent] = e.Subject
		}
	}
	return names
}

// WebhookEventOf returns the webhook event name under which events on subject
// are delivered, and false when they are not delivered to webhooks.
func WebhookEventOf(subject string) (string, bool) {
	e, ok := Lookup(subject)
	if !ok || e.WebhookEvent == "" {
		return "", false
	}
	return e.WebhookEvent, true
}

func newOf[T any, P interface {
	*T
	proto.Message
}]() proto.Message {
	return P(new(T))
}
