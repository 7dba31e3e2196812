package events

// Names of the JetStream streams. Dead letters go to the bus's own stream on
// "dlq.>" (pkg/natsx ensures it), so no stream here may hold subjects under
// "dlq.".
const (
	StreamIdentityEvents  = "IDENTITY_EVENTS"
	StreamContentEvents   = "CONTENT_EVENTS"
	StreamAgentteamEvents = "AGENTTEAM_EVENTS"
	StreamJobs            = "JOBS"
)

// Durable consumer names. A consumer parks a message it gives up on at
// "dlq.<durable>".
const (
	// DurableWebhookFanout is identity-svc's consumer of identity events that
	// turns each one into webhook deliveries.
	DurableWebhookFanout = "identity_webhook_fanout"
	// DurableWebhookDelivery is identity-svc's webhook delivery worker.
	DurableWebhookDelivery = "identity_webhook_delivery"
	// DurableQuestProgress is identity-svc's consumer of identity events that advances quests
	// (user.registered, payment.confirmed, plan.activated).
	DurableQuestProgress = "identity_quest_progress"
	// DurableSvgPreviewWorker is content-svc's SVG preview worker.
	DurableSvgPreviewWorker = "content_svg_preview_worker"
	// DurableAgentRunWorker is agentteam-svc's agent-run worker.
	DurableAgentRunWorker = "agentteam_agent_run_worker"
)

// Stream is a JetStream stream a service ensures at startup.
type Stream struct {
	Name     string
	Subjects []string
	// Jobs marks a stream of job wake-ups: a work queue whose message goes once its one
	// worker acknowledged it. Other streams carry events that any number of readers replay.
	Jobs bool
}

// Streams returns every stream the platform publishes into. Their subject
// filters do not overlap, and every catalogue subject belongs to exactly one
// of them. The slice is built on each call, so callers may keep or change it.
func Streams() []Stream {
	return []Stream{
		{Name: StreamIdentityEvents, Subjects: []string{"identity.>"}},
		{Name: StreamContentEvents, Subjects: []string{"content.>"}},
		{Name: StreamAgentteamEvents, Subjects: []string{"agentteam.>"}},
		{Name: StreamJobs, Subjects: []string{"jobs.>"}, Jobs: true},
	}
}
