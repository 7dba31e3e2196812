// Package webhook manages tenants' webhooks and delivers identity events to them, signed per
// the Standard Webhooks specification (webhook-id, webhook-timestamp and webhook-signature
// "v1,<base64 HMAC-SHA256>" under a per-endpoint whsec_ secret shown once). Each attempt is
// recorded; failures are retried on a schedule that honours Retry-After, 410 Gone disables the
// webhook, and a webhook failing without a success for MaxFailingFor is disabled.
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// Limits of webhooks.
const (
	MaxPerTenant  = 50
	DeliveryLimit = 100
	SecretPrefix  = "whsec_"
)

// Webhook is a tenant's endpoint subscribed to event names.
type Webhook struct {
	ID                  string
	TenantID            string
	Name                string
	URL                 string
	Events              []string
	Active              bool
	DisabledReason      *string
	LastTriggeredAt     *time.Time
	LastStatusCode      *int
	ConsecutiveFailures int
	FailingSince        *time.Time
	CreatedAt           time.Time
	// SealedSecret is the encrypted signing secret.
	SealedSecret []byte
}

// Attempt is one recorded call of a webhook.
type Attempt struct {
	ID             string
	MessageID      string
	WebhookID      string
	EventType      string
	RequestURL     string
	ResponseStatus *int
	ResponseBody   *string
	ErrorMessage   *string
	DurationMS     int
	Attempt        int
	Succeeded      bool
	DeliveredAt    *time.Time
	CreatedAt      time.Time
}

// Sealer encrypts secrets at rest, bound to the owning row's id.
type Sealer interface {
	Seal(plain, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// URLCheck refuses URLs the delivery client would never call, with apperr Invalid.
type URLCheck func(raw string) error

// Store persists webhooks. Lookups return apperr NotFound.
type Store interface {
	// Create inserts w; apperr Conflict when the tenant has MaxPerTenant webhooks.
	Create(ctx context.Context, w *Webhook) error
	List(ctx context.Context, tenantID string) ([]*Webhook, error)
	Get(ctx context.Context, tenantID, id string) (*Webhook, error)
	// Delete removes the webhook with its pending deliveries and their records.
	Delete(ctx context.Context, tenantID, id string) error
	Attempts(ctx context.Context, webhookID string, limit int) ([]*Attempt, error)
}

// Service implements the webhook management operations.
type Service struct {
	store    Store
	sealer   Sealer
	checkURL URLCheck
	events   []string
	now      func() time.Time
	newID    func() string
}

// NewService returns a Service; events are the names tenants may subscribe to.
func NewService(store Store, sealer Sealer, checkURL URLCheck, events []string, now func() time.Time, newID func() string) *Service {
	sorted := slices.Clone(events)
	slices.Sort(sorted)
	return &Service{store: store, sealer: sealer, checkURL: checkURL, events: sorted, now: now, newID: newID}
}

// authorize returns NotFound when the actor may not read the tenant and Forbidden when it may
// read but not manage it.
func authorize(a actor.Actor, tenantID string) error {
	if a.CanManage(tenantID) {
		return nil
	}
	if a.CanRead(tenantID) {
		return apperr.E(apperr.Forbidden, "tenant_admin_required", "a tenant administrator is required")
	}
	return apperr.E(apperr.NotFound, "not_found", "tenant not found")
}

// Create validates and stores a webhook and returns it with its whsec_ secret, which is never
// available again. It returns apperr NotFound or Forbidden for callers who may not manage the
// tenant, Invalid for a bad name, URL or event, and Conflict when the tenant has too many.
func (s *Service) Create(ctx context.Context, a actor.Actor, tenantID, name, url string, events []string) (*Webhook, string, error) {
	if err := authorize(a, tenantID); err != nil {
		return nil, "", err
	}
	name, url = strings.TrimSpace(name), strings.TrimSpace(url)
	var c check.Checker
	c.AddIf(name == "" || utf8.RuneCountInString(name) > 100, "name", "is required and at most 100 characters")
	if len(url) > 2048 {
		c.Add("url", "must be at most 2048 characters")
	} else if err := s.checkURL(url); err != nil {
		msg := "must be an absolute http(s) URL of a public host"
		if e, ok := apperr.As(err); ok && e.Message != "" {
			msg = e.Message
		}
		c.Add("url", msg)
	}
	subscribed := make([]string, 0, len(events))
	for _, e := range events {
		if !slices.Contains(s.events, e) {
			c.Add("events", "unknown event "+e+"; allowed: "+strings.Join(s.events, ", "))
			break
		}
		if !slices.Contains(subscribed, e) {
			subscribed = append(subscribed, e)
		}
	}
	c.AddIf(len(events) == 0, "events", "at least one event is required")
	if err := c.Reject("validation_failed", "the webhook is invalid"); err != nil {
		return nil, "", err
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", err
	}
	secret := SecretPrefix + base64.StdEncoding.EncodeToString(raw)
	w := &Webhook{ID: s.newID(), TenantID: tenantID, Name: name, URL: url, Events: subscribed, Active: true, CreatedAt: s.now()}
	sealed, err := s.sealer.Seal([]byte(secret), []byte(w.ID))
	if err != nil {
		return nil, "", err
	}
	w.SealedSecret = sealed
	if err := s.store.Create(ctx, w); err != nil {
		return nil, "", err
	}
	return w, secret, nil
}

// List answers the tenant's webhooks; apperr NotFound or Forbidden as Create.
func (s *Service) List(ctx context.Context, a actor.Actor, tenantID string) ([]*Webhook, error) {
	if err := authorize(a, tenantID); err != nil {
		return nil, err
	}
	return s.store.List(ctx, tenantID)
}

// Delete removes a webhook and its pending deliveries; apperr NotFound for a webhook of
// another tenant and NotFound or Forbidden as Create.
func (s *Service) Delete(ctx context.Context, a actor.Actor, tenantID, id string) error {
	if err := authorize(a, tenantID); err != nil {
		return err
	}
	return s.store.Delete(ctx, tenantID, id)
}

// Attempts answers a webhook's most recent delivery attempts, newest first; apperr NotFound for
// a webhook of another tenant and NotFound or Forbidden as Create.
func (s *Service) Attempts(ctx context.Context, a actor.Actor, tenantID, id string) ([]*Attempt, error) {
	if err := authorize(a, tenantID); err != nil {
		return nil, err
	}
	if _, err := s.store.Get(ctx, tenantID, id); err != nil {
		return nil, err
	}
	return s.store.Attempts(ctx, id, DeliveryLimit)
}
