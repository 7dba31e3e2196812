package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/pkg/jobs/pgjobs"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
	"github.com/motionstudio/platform/services/identity-svc/internal/webhook"
)

// Webhooks implements webhook.Store and webhook.Queue, and fans events out into delivery jobs.
type Webhooks struct {
	db     *gorm.DB
	outbox *outbox.Writer
}

// NewWebhooks returns a Webhooks store writing its job wake-ups through w.
func NewWebhooks(db *gorm.DB, w *outbox.Writer) *Webhooks { return &Webhooks{db: db, outbox: w} }

type webhookRow struct {
	ID                  string `gorm:"primaryKey"`
	TenantID            string
	Name                string
	URL                 string
	Events              jsonList `gorm:"type:jsonb"`
	SecretSealed        []byte
	IsActive            bool
	DisabledReason      *string
	LastTriggeredAt     *time.Time
	LastStatusCode      *int
	ConsecutiveFailures int
	FailingSince        *time.Time
	CreatedAt           time.Time
}

func (webhookRow) TableName() string { return "webhooks" }

func (m webhookRow) toDomain() *webhook.Webhook {
	return &webhook.Webhook{
		ID: m.ID, TenantID: m.TenantID, Name: m.Name, URL: m.URL, Events: []string(m.Events), Active: m.IsActive,
		DisabledReason: m.DisabledReason, LastTriggeredAt: m.LastTriggeredAt, LastStatusCode: m.LastStatusCode,
		ConsecutiveFailures: m.ConsecutiveFailures, FailingSince: m.FailingSince, CreatedAt: m.CreatedAt,
		SealedSecret: m.SecretSealed,
	}
}

// Create inserts w; apperr Conflict when the tenant has MaxPerTenant webhooks.
func (s *Webhooks) Create(ctx context.Context, w *webhook.Webhook) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		hooks := tx.Model(&webhookRow{}).Where("tenant_id = ?", w.TenantID)
		if err := lockTenantBelow(tx, w.TenantID, hooks, webhook.MaxPerTenant, "webhook",
			apperr.E(apperr.Conflict, "too_many_webhooks", "the tenant already has 50 webhooks; delete one first")); err != nil {
			return err
		}
		m := webhookRow{
			ID: w.ID, TenantID: w.TenantID, Name: w.Name, URL: w.URL, Events: jsonList(w.Events),
			SecretSealed: w.SealedSecret, IsActive: true, CreatedAt: w.CreatedAt,
		}
		return pgdb.Translate(tx.Create(&m).Error, "webhook")
	})
}

// List answers the tenant's webhooks, newest first.
func (s *Webhooks) List(ctx context.Context, tenantID string) ([]*webhook.Webhook, error) {
	var rows []webhookRow
	if err := s.db.WithContext(ctx).Where("tenant_id = ?", tenantID).Order("created_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "webhooks")
	}
	out := make([]*webhook.Webhook, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// Get finds a webhook of the tenant; apperr NotFound when there is none.
func (s *Webhooks) Get(ctx context.Context, tenantID, id string) (*webhook.Webhook, error) {
	var m webhookRow
	if err := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenantID, id).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "webhook")
	}
	return m.toDomain(), nil
}

// Delete removes the webhook with its messages and attempts; apperr NotFound when there is none.
func (s *Webhooks) Delete(ctx context.Context, tenantID, id string) error {
	res := s.db.WithContext(ctx).Exec("DELETE FROM webhooks WHERE tenant_id = ? AND id = ?", tenantID, id)
	if res.Error != nil {
		return pgdb.Translate(res.Error, "webhook")
	}
	if res.RowsAffected == 0 {
		return apperr.E(apperr.NotFound, "not_found", "webhook not found")
	}
	return nil
}

type attemptRow struct {
	ID             string `gorm:"primaryKey"`
	MessageID      string
	WebhookID      string
	EventType      string
	RequestURL     string
	ResponseStatus *int
	ResponseBody   *string
	ErrorMessage   *string
	DurationMs     int
	Attempt        int
	Succeeded      bool
	DeliveredAt    *time.Time
	CreatedAt      time.Time
}

func (attemptRow) TableName() string { return "webhook_deliveries" }

// Attempts answers the webhook's most recent attempts, newest first.
func (s *Webhooks) Attempts(ctx context.Context, webhookID string, limit int) ([]*webhook.Attempt, error) {
	var rows []attemptRow
	if err := s.db.WithContext(ctx).Where("webhook_id = ?", webhookID).Order("created_at DESC, id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "webhook deliveries")
	}
	out := make([]*webhook.Attempt, len(rows))
	for i, r := range rows {
		a := webhook.Attempt{
			ID: r.ID, MessageID: r.MessageID, WebhookID: r.WebhookID, EventType: r.EventType, RequestURL: r.RequestURL,
			ResponseStatus: r.ResponseStatus, ResponseBody: r.ResponseBody, ErrorMessage: r.ErrorMessage,
			DurationMS: r.DurationMs, Attempt: r.Attempt, Succeeded: r.Succeeded, DeliveredAt: r.DeliveredAt, CreatedAt: r.CreatedAt,
		}
		out[i] = &a
	}
	return out, nil
}

// Enqueue creates one Queued message per active webhook of the tenant subscribed to eventType,
// with its wake-up job, in the transaction that records the event as seen by consumer
// (outbox.Once): an event delivered again creates nothing. It returns how many it created.
func (s *Webhooks) Enqueue(ctx context.Context, consumer, tenantID, eventID, eventType string, body []byte, newID func() string, now time.Time) (int, error) {
	var created int
	_, err := outbox.Once(ctx, s.db, consumer, eventID, func(tx *gorm.DB) error {
		var err error
		created, err = s.enqueue(ctx, tx, tenantID, eventID, eventType, body, newID, now)
		return err
	})
	return created, err
}

func (s *Webhooks) enqueue(ctx context.Context, tx *gorm.DB, tenantID, eventID, eventType string, body []byte, newID func() string, now time.Time) (int, error) {
	var hooks []webhookRow
	err := tx.Where("tenant_id = ? AND is_active AND events @> ?::jsonb", tenantID, `["`+eventType+`"]`).Find(&hooks).Error
	if err != nil {
		return 0, pgdb.Translate(err, "webhooks")
	}
	for _, h := range hooks {
		id := newID()
		err := tx.Exec(`INSERT INTO webhook_messages (id, webhook_id, tenant_id, event_id, event_type, body, status, queued_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (webhook_id, event_id) DO NOTHING`,
			id, h.ID, tenantID, eventID, eventType, body, webhook.StatusQueued, now, now).Error
		if err != nil {
			return 0, pgdb.Translate(err, "webhook message")
		}
		if err := s.wake(ctx, tx, id, h.ID, tenantID, eventID, eventType, 1); err != nil {
			return 0, err
		}
	}
	return len(hooks), nil
}

func (s *Webhooks) wake(ctx context.Context, tx *gorm.DB, id, webhookID, tenantID, eventID, eventType string, attempt int) error {
	_, err := s.outbox.Add(ctx, tx, events.SubjectWebhookDeliveryJob, events.SubjectWebhookDeliveryJob, &identityv1.WebhookDeliveryJob{
		DeliveryId: id, WebhookId: webhookID, TenantId: tenantID, EventId: eventID, EventType: eventType, Attempt: int32(attempt), // #nosec G115 -- attempts stop at the delivery schedule's length
	})
	return err
}

// messageJobs is the job table of webhook deliveries: a message is Queued for a worker,
// Processing under its lease and Scheduled until its retry is due.
var messageJobs = pgjobs.Table{
	Name: "webhook_messages", Key: "id", Ready: []string{webhook.StatusQueued}, Leased: webhook.StatusProcessing,
	Attempts: "attempt", Touched: "queued_at", Scheduled: webhook.StatusScheduled, DueAt: "next_attempt_at",
}

// WakeDue queues up to limit messages whose retry is due, whose wake-up was lost (queued for
// longer than stale before now) or whose worker's lease lapsed, writing their wake-up jobs; it
// returns how many.
func (s *Webhooks) WakeDue(ctx context.Context, now time.Time, stale time.Duration, limit int) (int, error) {
	var due []messageRow
	return messageJobs.Requeue(ctx, s.db, now.Add(-stale), limit, &due, func(tx *gorm.DB) error {
		for _, d := range due {
			if err := s.wake(ctx, tx, d.ID, d.WebhookID, d.TenantID, d.EventID, d.EventType, d.Attempt+1); err != nil {
				return err
			}
		}
		return nil
	})
}

type messageRow struct {
	ID, WebhookID, TenantID, EventID, EventType string
	Body                                        []byte
	Attempt                                     int
}

// Claim leases a Queued message, or a Processing one whose lease lapsed, to owner for length.
// It returns jobs.ErrNoWork for a message that needs no attempt, cancelling it when its webhook
// is inactive, and a jobs.HeldError while another worker's lease is live.
func (s *Webhooks) Claim(ctx context.Context, messageID, owner string, length time.Duration) (*webhook.Message, *webhook.Webhook, jobs.Lease, error) {
	l, err := messageJobs.Claim(ctx, s.db, messageID, owner, length)
	if err != nil {
		return nil, nil, l, err
	}
	var m messageRow
	if err := s.db.WithContext(ctx).Table("webhook_messages").Where("id = ?", messageID).Take(&m).Error; err != nil {
		return nil, nil, l, pgdb.Translate(err, "webhook message")
	}
	var h webhookRow
	err = s.db.WithContext(ctx).Where("id = ?", m.WebhookID).Take(&h).Error
	if errors.Is(err, gorm.ErrRecordNotFound) || (err == nil && !h.IsActive) {
		if err := messageJobs.Finish(ctx, s.db, l, webhook.StatusCancelled, nil); err != nil && !errors.Is(err, jobs.ErrLeaseLost) {
			return nil, nil, l, err
		}
		return nil, nil, l, jobs.ErrNoWork
	}
	if err != nil {
		return nil, nil, l, pgdb.Translate(err, "webhook")
	}
	msg := webhook.Message{ID: m.ID, WebhookID: m.WebhookID, TenantID: m.TenantID, EventID: m.EventID, EventType: m.EventType,
		Body: m.Body, Attempt: m.Attempt}
	if msg.Unrecorded, err = s.unrecorded(ctx, m.ID, m.Attempt); err != nil {
		return nil, nil, l, err
	}
	return &msg, h.toDomain(), l, nil
}

// Renew extends the lease l; jobs.ErrLeaseLost when it no longer holds the message.
func (s *Webhooks) Renew(ctx context.Context, l jobs.Lease) error {
	return messageJobs.Renew(ctx, s.db, l)
}

// unrecorded answers the attempt numbers below attempt that have no recorded attempt row.
func (s *Webhooks) unrecorded(ctx context.Context, messageID string, attempt int) ([]int, error) {
	var recorded []int
	if err := s.db.WithContext(ctx).Raw(`SELECT attempt FROM webhook_deliveries WHERE message_id = ?`, messageID).
		Scan(&recorded).Error; err != nil {
		return nil, pgdb.Translate(err, "webhook deliveries")
	}
	var missing []int
	for n := 1; n < attempt; n++ {
		if !slices.Contains(recorded, n) {
			missing = append(missing, n)
		}
	}
	return missing, nil
}

// Finish records the attempt, moves the message and updates the webhook in one transaction if
// l still holds the message; otherwise it changes nothing and returns jobs.ErrLeaseLost.
func (s *Webhooks) Finish(ctx context.Context, l jobs.Lease, m *webhook.Message, w *webhook.Webhook, o webhook.Outcome) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := messageJobs.Finish(ctx, tx, l, o.Status, map[string]any{"next_attempt_at": o.NextAttemptAt}); err != nil {
			return err
		}
		a := o.Attempt
		for _, r := range append(o.Lost, a) {
			row := attemptRow{
				ID: r.ID, MessageID: r.MessageID, WebhookID: r.WebhookID, EventType: r.EventType, RequestURL: r.RequestURL,
				ResponseStatus: r.ResponseStatus, ResponseBody: r.ResponseBody, ErrorMessage: r.ErrorMessage,
				DurationMs: r.DurationMS, Attempt: r.Attempt, Succeeded: r.Succeeded, DeliveredAt: r.DeliveredAt, CreatedAt: r.CreatedAt,
			}
			if err := tx.Create(&row).Error; err != nil {
				return pgdb.Translate(err, "webhook delivery")
			}
		}
		var err error
		if a.Succeeded {
			err = tx.Exec(`UPDATE webhooks SET last_triggered_at = ?, last_status_code = ?, consecutive_failures = 0,
				failing_since = NULL WHERE id = ?`, a.CreatedAt, a.ResponseStatus, w.ID).Error
		} else {
			err = tx.Exec(`UPDATE webhooks SET last_triggered_at = ?, last_status_code = ?,
				consecutive_failures = consecutive_failures + 1, failing_since = coalesce(failing_since, ?) WHERE id = ?`,
				a.CreatedAt, a.ResponseStatus, a.CreatedAt, w.ID).Error
		}
		if err != nil {
			return pgdb.Translate(err, "webhook")
		}
		if o.Disable == "" {
			return nil
		}
		if err := tx.Exec("UPDATE webhooks SET is_active = false, disabled_reason = ? WHERE id = ?", o.Disable, w.ID).Error; err != nil {
			return pgdb.Translate(err, "webhook")
		}
		err = tx.Exec(`UPDATE webhook_messages SET status = ?, lease_until = NULL WHERE webhook_id = ? AND id <> ?
			AND status IN (?, ?, ?)`, webhook.StatusCancelled, w.ID, m.ID, webhook.StatusQueued, webhook.StatusScheduled, webhook.StatusProcessing).Error
		return pgdb.Translate(err, "webhook messages")
	})
}

// WebhookQueueQuery measures the webhook messages waiting for a delivery attempt (Queued,
// Scheduled for a retry) or in one (Processing), for pgdb.NewJobQueueCollector, from the
// webhook_messages_due_idx partial index; every state is answered, empty or not.
const WebhookQueueQuery = `SELECT 'webhook_messages', s.status, count(m.id)::float8,
	COALESCE(EXTRACT(EPOCH FROM now() - min(m.created_at)), 0)::float8
	FROM (VALUES ('Queued'), ('Processing'), ('Scheduled')) AS s (status)
	LEFT JOIN webhook_messages m ON m.status = s.status
	GROUP BY s.status`
