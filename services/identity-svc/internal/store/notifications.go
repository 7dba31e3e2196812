package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/identity-svc/internal/notify"
)

// Notifications implements notify.Recorder over the notification_outbox table.
type Notifications struct{ db *gorm.DB }

// NewNotifications returns a Notifications store.
func NewNotifications(db *gorm.DB) *Notifications { return &Notifications{db: db} }

// Record inserts a copy of m.
func (s *Notifications) Record(ctx context.Context, m notify.Message) error {
	data, err := json.Marshal(m.Data)
	if err != nil {
		return fmt.Errorf("store: encode notification data: %w", err)
	}
	err = s.db.WithContext(ctx).Exec(`INSERT INTO notification_outbox
		(id, channel, recipient, kind, subject, body, data, tenant_id, user_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?::jsonb, NULLIF(?, '')::uuid, NULLIF(?, '')::uuid, ?)`,
		uuid.Must(uuid.NewV7()).String(), m.Channel, m.To, m.Kind, m.Subject, m.Body, string(data),
		m.TenantID, m.UserID, time.Now().UTC()).Error
	return pgdb.Translate(err, "notification")
}
