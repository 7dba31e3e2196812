// Package account holds the identity service's users and the rules for creating, reading and
// changing them. Tenants live in package tenant.
package account

import (
	"context"
	"net/mail"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
)

// User is an account inside one tenant.
type User struct {
	ID            string
	TenantID      string
	Email         *string
	EmailVerified bool
	Phone         *string
	PhoneVerified bool
	FullName      *string
	AvatarURL     *string
	IsAdmin       bool
	IsTenantAdmin bool
	RegisterMode  string
	PasswordHash  string
	LastActive    time.Time
	RegisteredAt  time.Time

	BalanceMinor             int64
	AffiliateBalanceMinor    int64
	LoyaltyScore             int
	DailyRemainRenderCount   int
	MaxDailyRenderCount      int
	ParallelRenderingCeiling int
	UsedStorageBytes         int64

	Profile Profile

	// BannedAt is set while the user is banned; BannedUntil is the end of a temporary ban
	// (nil for a ban without end).
	BannedAt    *time.Time
	BannedUntil *time.Time
	BanReason   *string
}

// Profile is what a user tells about themselves and how they want to be told things.
type Profile struct {
	Slogan, AboutMe, CompanyName, WebsiteName *string
	BirthDate                                 *time.Time
	Gender                                    *string
	EmailTellMe, SMSTellMe, PushTellMe        bool
	TelegramTellMe                            bool
	AvatarID                                  *string
}

// DefaultProfile is the profile of a new user: notified by email, SMS and push, not Telegram.
func DefaultProfile() Profile {
	return Profile{EmailTellMe: true, SMSTellMe: true, PushTellMe: true}
}

// Banned reports whether the user is banned at t.
func (u *User) Banned(t time.Time) bool {
	return u.BannedAt != nil && (u.BannedUntil == nil || t.Before(*u.BannedUntil))
}

// Store persists users. Lookups return apperr NotFound; inserts return apperr Conflict on a
// duplicate email within a tenant.
type Store interface {
	TenantIDBySlug(ctx context.Context, slug string) (string, error)
	CreateUser(ctx context.Context, u *User) error
	User(ctx context.Context, tenantID, userID string) (*User, error)
	UserByEmail(ctx context.Context, tenantID, email string) (*User, error)
}

// Hasher turns a password into a stored hash.
type Hasher interface {
	Hash(plain string) (string, error)
}

// Service implements the user rules of the operator CLI over a Store.
type Service struct {
	store  Store
	hasher Hasher
	now    func() time.Time
	newID  func() string
}

// NewService returns a Service.
func NewService(store Store, hasher Hasher, now func() time.Time, newID func() string) *Service {
	return &Service{store: store, hasher: hasher, now: now, newID: newID}
}

// MinPasswordLength is the shortest password accepted.
const MinPasswordLength = 8

// NewUser is the input of CreateUser.
type NewUser struct {
	TenantSlug, Email, Password, FullName string
	Admin, TenantAdmin                    bool
}

// CreateUser creates a user with an email and password in the tenant named by slug. It returns
// apperr Invalid for bad input, NotFound for an unknown tenant and Conflict for a taken email.
func (s *Service) CreateUser(ctx context.Context, in NewUser) (*User, error) {
	email := strings.ToLower(strings.TrimSpace(in.Email))
	if _, err := mail.ParseAddress(email); err != nil || len(email) > 254 {
		return nil, apperr.E(apperr.Invalid, "validation_failed", "the user is invalid").
			WithFields(apperr.FieldError{Field: "email", Message: "must be an email address"})
	}
	if len([]rune(in.Password)) < MinPasswordLength {
		return nil, apperr.E(apperr.Invalid, "validation_failed", "the user is invalid").
			WithFields(apperr.FieldError{Field: "password", Message: "must be at least 8 characters"})
	}
	tenantID, err := s.store.TenantIDBySlug(ctx, in.TenantSlug)
	if err != nil {
		return nil, err
	}
	hash, err := s.hasher.Hash(in.Password)
	if err != nil {
		return nil, err
	}
	now := s.now()
	u := &User{
		ID: s.newID(), TenantID: tenantID, Email: &email, RegisterMode: "Email", PasswordHash: hash,
		IsAdmin: in.Admin, IsTenantAdmin: in.TenantAdmin, LastActive: now, RegisteredAt: now,
		Profile: DefaultProfile(), ParallelRenderingCeiling: 1,
	}
	if name := strings.TrimSpace(in.FullName); name != "" {
		u.FullName = &name
	}
	if err := s.store.CreateUser(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// User returns a user of the tenant; apperr NotFound when there is none.
func (s *Service) User(ctx context.Context, tenantID, userID string) (*User, error) {
	return s.store.User(ctx, tenantID, userID)
}

// UserByEmail returns the user of the tenant (by slug) with that email; apperr NotFound when
// the tenant or the user does not exist.
func (s *Service) UserByEmail(ctx context.Context, tenantSlug, email string) (*User, error) {
	tenantID, err := s.store.TenantIDBySlug(ctx, tenantSlug)
	if err != nil {
		return nil, err
	}
	return s.store.UserByEmail(ctx, tenantID, strings.ToLower(strings.TrimSpace(email)))
}
