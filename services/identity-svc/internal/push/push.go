// Package push keeps users' Web Push subscriptions (RFC 8030 endpoints with the RFC 8291
// p256dh and auth keys). A browser's endpoint belongs to one user at a time: subscribing it
// again moves it to the caller. Bad input is apperr Invalid.
package push

import (
	"context"
	"encoding/base64"
	"net/url"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/check"
)

// Subscription is one browser's push endpoint for a user.
type Subscription struct {
	ID        string
	UserID    string
	TenantID  string
	Endpoint  string
	P256DH    string
	Auth      string
	UserAgent string
	CreatedAt time.Time
}

// Store persists subscriptions. Save inserts or, for a known endpoint, replaces the owner and
// keys, answering the stored row. Delete removes the user's subscription of endpoint, or all
// of the user's subscriptions when endpoint is empty.
type Store interface {
	Save(ctx context.Context, s *Subscription) (*Subscription, error)
	Delete(ctx context.Context, userID, endpoint string) error
}

// Service implements the subscription rules.
type Service struct {
	store Store
	now   func() time.Time
	newID func() string
}

// NewService returns a Service.
func NewService(store Store, now func() time.Time, newID func() string) *Service {
	return &Service{store: store, now: now, newID: newID}
}

// Subscribe validates and stores a subscription for the user. It returns apperr Invalid for an
// endpoint that is not an https URL of at most 2048 characters, a p256dh key that is not an
// uncompressed P-256 point, an auth secret that is not 16 bytes (both base64url) or a user agent
// over 512 characters.
func (s *Service) Subscribe(ctx context.Context, sub Subscription) (*Subscription, error) {
	var c check.Checker
	if u, err := url.Parse(sub.Endpoint); err != nil || u.Scheme != "https" || u.Host == "" || len(sub.Endpoint) > 2048 {
		c.Add("endpoint", "must be an https URL of at most 2048 characters")
	}
	if k, ok := decode(sub.P256DH); !ok || len(k) != 65 || k[0] != 4 {
		c.Add("keys.p256dh", "must be an uncompressed P-256 public key in base64url")
	}
	if k, ok := decode(sub.Auth); !ok || len(k) != 16 {
		c.Add("keys.auth", "must be a 16-byte secret in base64url")
	}
	c.AddIf(len(sub.UserAgent) > 512, "user_agent", "must be at most 512 characters")
	if err := c.Reject("validation_failed", "The push subscription is invalid."); err != nil {
		return nil, err
	}
	sub.ID, sub.CreatedAt = s.newID(), s.now()
	return s.store.Save(ctx, &sub)
}

// Unsubscribe removes the user's subscription of endpoint, or every subscription of the user
// when endpoint is empty; removing what is not there is not an error.
func (s *Service) Unsubscribe(ctx context.Context, userID, endpoint string) error {
	return s.store.Delete(ctx, userID, strings.TrimSpace(endpoint))
}

// decode reads base64url with or without padding (browsers send it unpadded).
func decode(s string) ([]byte, bool) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	return b, err == nil
}
