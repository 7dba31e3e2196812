// Package store persists the identity service's records in PostgreSQL through gorm and holds
// its embedded migrations.
package store

import (
	"context"
	"embed"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the service's own schema migrations.
var Migrations = pgdb.Embedded("identity", migrationFiles, "migrations")

// Accounts implements account.Store.
type Accounts struct{ db *gorm.DB }

// NewAccounts returns an Accounts store.
func NewAccounts(db *gorm.DB) *Accounts { return &Accounts{db: db} }

type userModel struct {
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
	Slogan                   *string
	AboutMe                  *string
	CompanyName              *string
	WebsiteName              *string
	BirthDate                *time.Time `gorm:"type:date"`
	Gender                   *string
	EmailTellMe              bool
	SmsTellMe                bool
	PushTellMe               bool
	TelegramTellMe           bool
	AvatarID                 *string
	BannedAt                 *time.Time
	BannedUntil              *time.Time
	BanReason                *string
}

func (userModel) TableName() string { return "users" }

func toUserModel(u *account.User) userModel {
	return userModel{
		ID: u.ID, TenantID: u.TenantID, Email: u.Email, EmailVerified: u.EmailVerified, PhoneNumber: u.Phone,
		PhoneVerified: u.PhoneVerified, FullName: u.FullName, AvatarURL: u.AvatarURL, IsAdmin: u.IsAdmin,
		IsTenantAdmin: u.IsTenantAdmin, RegisterMode: u.RegisterMode, PasswordHash: u.PasswordHash,
		LastActiveDate: u.LastActive, RegisterDate: u.RegisteredAt, BalanceMinor: u.BalanceMinor,
		AffiliateBalanceMinor: u.AffiliateBalanceMinor, LoyaltyScore: u.LoyaltyScore,
		DailyRemainRenderCount: u.DailyRemainRenderCount, MaxDailyRenderCount: u.MaxDailyRenderCount,
		ParallelRenderingCeiling: u.ParallelRenderingCeiling, UsedStorageBytes: u.UsedStorageBytes,
		Slogan: u.Profile.Slogan, AboutMe: u.Profile.AboutMe, CompanyName: u.Profile.CompanyName,
		WebsiteName: u.Profile.WebsiteName, BirthDate: u.Profile.BirthDate, Gender: u.Profile.Gender,
		EmailTellMe: u.Profile.EmailTellMe, SmsTellMe: u.Profile.SMSTellMe, PushTellMe: u.Profile.PushTellMe,
		TelegramTellMe: u.Profile.TelegramTellMe, AvatarID: u.Profile.AvatarID,
		BannedAt: u.BannedAt, BannedUntil: u.BannedUntil, BanReason: u.BanReason,
	}
}

func (m userModel) toDomain() *account.User {
	return &account.User{
		ID: m.ID, TenantID: m.TenantID, Email: m.Email, EmailVerified: m.EmailVerified, Phone: m.PhoneNumber,
		PhoneVerified: m.PhoneVerified, FullName: m.FullName, AvatarURL: m.AvatarURL, IsAdmin: m.IsAdmin,
		IsTenantAdmin: m.IsTenantAdmin, RegisterMode: m.RegisterMode, PasswordHash: m.PasswordHash,
		LastActive: m.LastActiveDate, RegisteredAt: m.RegisterDate, BalanceMinor: m.BalanceMinor,
		AffiliateBalanceMinor: m.AffiliateBalanceMinor, LoyaltyScore: m.LoyaltyScore,
		DailyRemainRenderCount: m.DailyRemainRenderCount, MaxDailyRenderCount: m.MaxDailyRenderCount,
		ParallelRenderingCeiling: m.ParallelRenderingCeiling, UsedStorageBytes: m.UsedStorageBytes,
		Profile: account.Profile{
			Slogan: m.Slogan, AboutMe: m.AboutMe, CompanyName: m.CompanyName, WebsiteName: m.WebsiteName,
			BirthDate: m.BirthDate, Gender: m.Gender, EmailTellMe: m.EmailTellMe, SMSTellMe: m.SmsTellMe,
			PushTellMe: m.PushTellMe, TelegramTellMe: m.TelegramTellMe, AvatarID: m.AvatarID,
		},
		BannedAt: m.BannedAt, BannedUntil: m.BannedUntil, BanReason: m.BanReason,
	}
}

// TenantIDBySlug finds the id of the tenant with that slug; apperr NotFound when there is none.
func (s *Accounts) TenantIDBySlug(ctx context.Context, slug string) (string, error) {
	var row struct{ ID string }
	if err := s.db.WithContext(ctx).Table("tenants").Select("id").Where("slug = ?", slug).Take(&row).Error; err != nil {
		return "", pgdb.Translate(err, "tenant")
	}
	return row.ID, nil
}

// CreateUser inserts u; apperr Conflict when the email or phone is taken in the tenant.
func (s *Accounts) CreateUser(ctx context.Context, u *account.User) error {
	m := toUserModel(u)
	return pgdb.Translate(s.db.WithContext(ctx).Create(&m).Error, "user")
}

// User finds a user of a tenant; apperr NotFound when there is none.
func (s *Accounts) User(ctx context.Context, tenantID, userID string) (*account.User, error) {
	var m userModel
	if err := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenantID, userID).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "user")
	}
	return m.toDomain(), nil
}

// UserByEmail finds a user of a tenant by email; apperr NotFound when there is none.
func (s *Accounts) UserByEmail(ctx context.Context, tenantID, email string) (*account.User, error) {
	var m userModel
	if err := s.db.WithContext(ctx).Where("tenant_id = ? AND email = ?", tenantID, email).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "user")
	}
	return m.toDomain(), nil
}
