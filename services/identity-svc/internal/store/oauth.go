package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

type oauthIdentity struct {
	ID        string `gorm:"primaryKey"`
	TenantID  string
	UserID    string
	Provider  string
	Subject   string
	CreatedAt time.Time
}

func (oauthIdentity) TableName() string { return "oauth_identities" }

// UserByOAuth finds the user linked to a provider account; apperr NotFound when none is.
func (s *Auth) UserByOAuth(ctx context.Context, tenantID, provider, subject string) (*auth.User, error) {
	return s.users.UserByOAuth(ctx, tenantID, provider, subject)
}

// LinkOAuth links a provider account to a user; linking it again is not an error.
func (s *Auth) LinkOAuth(ctx context.Context, tenantID, userID, provider, subject string) error {
	return pgdb.Translate(s.db.WithContext(ctx).Exec(`INSERT INTO oauth_identities (id, tenant_id, user_id, provider, subject, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, provider, subject) DO NOTHING`,
		uuid.Must(uuid.NewV7()).String(), tenantID, userID, provider, subject, time.Now().UTC()).Error, "oauth identity")
}

// CreateOAuthUser inserts the user, its link and its identity.user.registered.v1 event in one
// transaction; apperr Conflict when the email is taken in the tenant.
func (s *Auth) CreateOAuthUser(ctx context.Context, u *auth.User, provider, subject string) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := s.users.insert(ctx, tx, u); err != nil {
			return err
		}
		link := oauthIdentity{ID: uuid.Must(uuid.NewV7()).String(), TenantID: u.TenantID, UserID: u.ID, Provider: provider, Subject: subject, CreatedAt: u.RegisteredAt}
		if err := tx.Create(&link).Error; err != nil {
			return pgdb.Translate(err, "oauth identity")
		}
		return nil
	})
}
