package store

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
	"github.com/motionstudio/platform/services/identity-svc/internal/notify"
)

// Auth implements auth.Store: the reads and writes of registration and login.
type Auth struct {
	db     *gorm.DB
	outbox *outbox.Writer
}

// NewAuth returns an Auth store that records events through w.
func NewAuth(db *gorm.DB, w *outbox.Writer) *Auth { return &Auth{db: db, outbox: w} }

type authTenant struct {
	ID               string `gorm:"primaryKey"`
	Slug             string
	Name             string
	Kind             string
	Status           string
	CustomDomain     *string
	DomainVerified   bool
	ContactEmail     string
	MaxUsers         *int
	MaxStorageGb     *int
	MonthlyRenderQty *int
	TrialEndsAt      *time.Time
	CreatedAt        time.Time
}

func (authTenant) TableName() string { return "tenants" }

func (m authTenant) toDomain() *auth.Tenant {
	return &auth.Tenant{
		ID: m.ID, Slug: m.Slug, Name: m.Name, Kind: m.Kind, Status: m.Status, CustomDomain: m.CustomDomain,
		DomainVerified: m.DomainVerified, ContactEmail: m.ContactEmail, MaxUsers: m.MaxUsers,
		MaxStorageGB: m.MaxStorageGb, MonthlyRenderQty: m.MonthlyRenderQty, TrialEndsAt: m.TrialEndsAt,
		CreatedAt: m.CreatedAt,
	}
}

type authUser struct {
	ID                       string `gorm:"primaryKey"`
	TenantID                 string
	Email                    *string
	EmailVerified            bool
	PhoneNumber              *string
	PhoneVerified            bool
	FullName                 *string
	AvatarURL                *string
	IsAdmin                  bool
	IsTenantAdmin            bool
	RegisterMode             string
	PasswordHash             string
	LastActiveDate           time.Time
	RegisterDate             time.Time
	BalanceMinor             int64
	AffiliateBalanceMinor    int64
	LoyaltyScore             int
	DailyRemainRenderCount   int
	MaxDailyRenderCount      int
	ParallelRenderingCeiling int
	UsedStorageBytes         int64
	BannedAt                 *time.Time
	BannedUntil              *time.Time
	SignupAffiliateCode      *string
}

func (authUser) TableName() string { return "users" }

func (m authUser) toDomain() *auth.User {
	return &auth.User{
		ID: m.ID, TenantID: m.TenantID, Email: m.Email, EmailVerified: m.EmailVerified, Phone: m.PhoneNumber,
		PhoneVerified: m.PhoneVerified, FullName: m.FullName, AvatarURL: m.AvatarURL, IsAdmin: m.IsAdmin,
		IsTenantAdmin: m.IsTenantAdmin, RegisterMode: m.RegisterMode, PasswordHash: m.PasswordHash,
		LastActive: m.LastActiveDate, RegisteredAt: m.RegisterDate, BalanceMinor: m.BalanceMinor,
		AffiliateBalanceMinor: m.AffiliateBalanceMinor, LoyaltyScore: m.LoyaltyScore,
		DailyRemainRenderCount: m.DailyRemainRenderCount, MaxDailyRenderCount: m.MaxDailyRenderCount,
		ParallelRenderingCeiling: m.ParallelRenderingCeiling, UsedStorageBytes: m.UsedStorageBytes,
		BannedAt: m.BannedAt, BannedUntil: m.BannedUntil,
	}
}

func toAuthUser(u *auth.User, affiliateCode string) authUser {
	m := authUser{
		ID: u.ID, TenantID: u.TenantID, Email: u.Email, EmailVerified: u.EmailVerified, PhoneNumber: u.Phone,
		PhoneVerified: u.PhoneVerified, FullName: u.FullName, AvatarURL: u.AvatarURL, IsAdmin: u.IsAdmin,
		IsTenantAdmin: u.IsTenantAdmin, RegisterMode: u.RegisterMode, PasswordHash: u.PasswordHash,
		LastActiveDate: u.LastActive, RegisterDate: u.RegisteredAt, ParallelRenderingCeiling: u.ParallelRenderingCeiling,
	}
	if affiliateCode != "" {
		m.SignupAffiliateCode = &affiliateCode
	}
	return m
}

// TenantBySlug finds a tenant by slug; apperr NotFound when there is none.
func (s *Auth) TenantBySlug(ctx context.Context, slug string) (*auth.Tenant, error) {
	var m authTenant
	if err := s.db.WithContext(ctx).Where("slug = ?", slug).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "tenant")
	}
	return m.toDomain(), nil
}

// Tenant finds a tenant by id; apperr NotFound when there is none.
func (s *Auth) Tenant(ctx context.Context, id string) (*auth.Tenant, error) {
	var m authTenant
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "tenant")
	}
	return m.toDomain(), nil
}

func (s *Auth) userWhere(ctx context.Context, query string, args ...any) (*auth.User, error) {
	var m authUser
	if err := s.db.WithContext(ctx).Where(query, args...).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "user")
	}
	return m.toDomain(), nil
}

// UserByEmail finds a user of a tenant by (lower-case) email; apperr NotFound when there is none.
func (s *Auth) UserByEmail(ctx context.Context, tenantID, email string) (*auth.User, error) {
	return s.userWhere(ctx, "tenant_id = ? AND email = ?", tenantID, email)
}

// UserByPhone finds a user of a tenant by E.164 phone number; apperr NotFound when there is none.
func (s *Auth) UserByPhone(ctx context.Context, tenantID, phone string) (*auth.User, error) {
	return s.userWhere(ctx, "tenant_id = ? AND phone_number = ?", tenantID, phone)
}

// User finds a user of a tenant; apperr NotFound when there is none.
func (s *Auth) User(ctx context.Context, tenantID, userID string) (*auth.User, error) {
	return s.userWhere(ctx, "tenant_id = ? AND id = ?", tenantID, userID)
}

// CreateUser inserts u and its identity.user.registered.v1 event in one transaction; apperr
// Conflict when the email or phone is taken in the tenant.
func (s *Auth) CreateUser(ctx context.Context, u *auth.User, affiliateCode string) error {
	m := toAuthUser(u, affiliateCode)
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := tx.WithContext(ctx).Create(&m).Error; err != nil {
			return pgdb.Translate(err, "user")
		}
		ev := &identityv1.UserRegistered{
			UserId: u.ID, TenantId: u.TenantID, Email: authStr(u.Email), PhoneNumber: authStr(u.Phone),
			FullName: authStr(u.FullName), RegisterMode: u.RegisterMode, RegisteredAt: timestamppb.New(u.RegisteredAt),
		}
		_, err := s.outbox.Add(ctx, tx, events.SubjectUserRegistered, events.SubjectUserRegistered, ev)
		return err
	})
}

// RecordLogin stamps last_active_date and, when newHash is set, stores the re-hashed password.
func (s *Auth) RecordLogin(ctx context.Context, userID string, at time.Time, newHash string) error {
	updates := map[string]any{"last_active_date": at}
	if newHash != "" {
		updates["password_hash"] = newHash
		updates["updated_at"] = at
	}
	return pgdb.Translate(s.db.WithContext(ctx).Model(&authUser{}).Where("id = ?", userID).Updates(updates).Error, "user")
}

// SetPasswordHash replaces the user's password hash.
func (s *Auth) SetPasswordHash(ctx context.Context, userID, hash string) error {
	return pgdb.Translate(s.db.WithContext(ctx).Model(&authUser{}).Where("id = ?", userID).
		Updates(map[string]any{"password_hash": hash, "updated_at": time.Now().UTC()}).Error, "user")
}

func authStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// MarkVerified sets email_verified (notify.Email) or phone_verified (notify.SMS) when the user's
// address is still target; apperr NotFound when it changed or the user is gone.
func (s *Auth) MarkVerified(ctx context.Context, userID, channel, target string) error {
	column, flag := "email", "email_verified"
	if channel == notify.SMS {
		column, flag = "phone_number", "phone_verified"
	}
	res := s.db.WithContext(ctx).Model(&authUser{}).Where("id = ? AND "+column+" = ?", userID, target).
		Updates(map[string]any{flag: true, "updated_at": time.Now().UTC()})
	if res.Error != nil {
		return pgdb.Translate(res.Error, "user")
	}
	if res.RowsAffected == 0 {
		return apperr.E(apperr.NotFound, "not_found", "user not found")
	}
	return nil
}
