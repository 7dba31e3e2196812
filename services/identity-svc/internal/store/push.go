package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/identity-svc/internal/push"
)

// PushSubscriptions implements push.Store.
type PushSubscriptions struct{ db *gorm.DB }

// NewPushSubscriptions returns a PushSubscriptions store.
func NewPushSubscriptions(db *gorm.DB) *PushSubscriptions { return &PushSubscriptions{db: db} }

type pushSubscription struct {
	ID        string `gorm:"primaryKey"`
	UserID    string
	TenantID  string
	Endpoint  string
	P256dh    string `gorm:"column:p256dh"`
	Auth      string
	UserAgent string
	CreatedAt time.Time
}

func (pushSubscription) TableName() string { return "push_subscriptions" }

// Save inserts s, or moves an existing endpoint to s's user with s's keys, and answers the row.
func (p *PushSubscriptions) Save(ctx context.Context, s *push.Subscription) (*push.Subscription, error) {
	var m pushSubscription
	err := p.db.WithContext(ctx).Raw(`INSERT INTO push_subscriptions
		(id, user_id, tenant_id, endpoint, p256dh, auth, user_agent, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (endpoint) DO UPDATE SET user_id = EXCLUDED.user_id, tenant_id = EXCLUDED.tenant_id,
			p256dh = EXCLUDED.p256dh, auth = EXCLUDED.auth, user_agent = EXCLUDED.user_agent, updated_at = EXCLUDED.updated_at
		RETURNING id, user_id, tenant_id, endpoint, p256dh, auth, user_agent, created_at`,
		s.ID, s.UserID, s.TenantID, s.Endpoint, s.P256DH, s.Auth, s.UserAgent, s.CreatedAt, s.CreatedAt).Scan(&m).Error
	if err != nil {
		return nil, pgdb.Translate(err, "push subscription")
	}
	return &push.Subscription{ID: m.ID, UserID: m.UserID, TenantID: m.TenantID, Endpoint: m.Endpoint, P256DH: m.P256dh,
		Auth: m.Auth, UserAgent: m.UserAgent, CreatedAt: m.CreatedAt}, nil
}

// Delete removes the user's subscription of endpoint, or all of them when endpoint is empty.
func (p *PushSubscriptions) Delete(ctx context.Context, userID, endpoint string) error {
	q := p.db.WithContext(ctx).Where("user_id = ?", userID)
	if endpoint != "" {
		q = q.Where("endpoint = ?", endpoint)
	}
	return pgdb.Translate(q.Delete(&pushSubscription{}).Error, "push subscription")
}
