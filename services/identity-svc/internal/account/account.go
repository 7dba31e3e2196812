// Package account holds the identity service's users and the rules for creating, reading and
// changing them. Tenants live in package tenant.
package account

import (
	"context"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	emailrule "github.com/motionstudio/platform/pkg/email"
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

	// SignupAffiliateCode is the affiliate code given at registration, if any.
	SignupAffiliateCode *string
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

// ConfirmAddress marks the phone (phone true) or the email verified when it is still target; it
// returns apperr NotFound when the address changed since the code was sent.
func (u *User) ConfirmAddress(phone bool, target string) error {
	addr, flag := u.Email, &u.EmailVerified
	if phone {
		addr, flag = u.Phone, &u.PhoneVerified
	}
	if addr == nil || *addr != target {
		return apperr.E(apperr.NotFound, "not_found", "user not found")
	}
	*flag = true
	return nil
}

// ChangeBalance adds delta (negative for a debit) to the balance; it returns apperr Conflict
// insufficient_balance, changing nothing, when the balance would go below zero. It is the one
// way a balance changes: purchases, refunds, quest prizes and gifts all go through it.
func (u *User) ChangeBalance(delta int64) error {
	if u.BalanceMinor+delta < 0 {
		return apperr.E(apperr.Conflict, "insufficient_balance", "the balance does not cover the price")
	}
	u.BalanceMinor += delta
	return nil
}

// DefaultProfile is the profile of a new user: notified by email, SMS and push, not Telegram.
func DefaultProfile() Profile {
	return Profile{EmailTellMe: true, SMSTellMe: true, PushTellMe: true}
}

// Banned reports whether the user is banned at t.
func (u *User) Banned(t time.Time) bool {
	return u.BannedAt != nil && (u.BannedUntil == nil || t.Before(*u.BannedUntil))
}

// Store persists users. Lookups return apperr NotFound; Create returns apperr Conflict on a
// duplicate email within a tenant and records the user's identity.user.registered.v1 event,
// as every other way a user comes to exist does.
type Store interface {
	Create(ctx context.Context, u *User) error
	User(ctx context.Context, tenantID, userID string) (*User, error)
	UserByEmail(ctx context.Context, tenantID, email string) (*User, error)
}

// TenantIDs finds a tenant's id by its slug (apperr NotFound when there is none).
type TenantIDs interface {
	IDBySlug(ctx context.Context, slug string) (string, error)
}

// Hasher turns a password into a stored hash.
type Hasher interface {
	Hash(plain string) (string, error)
}

// Service implements the user rules of the operator CLI over a Store.
type Service struct {
	store   Store
	tenants TenantIDs
	hasher  Hasher
	now     func() time.Time
	newID   func() string
}

// NewService returns a Service.
func NewService(store Store, tenants TenantIDs, hasher Hasher, now func() time.Time, newID func() string) *Service {
	return &Service{store: store, tenants: tenants, hasher: hasher, now: now, newID: newID}
}

// Password length bounds; the upper one keeps argon2id's input bounded.
const (
	MinPasswordLength = 8
	MaxPasswordLength = 256
)

// CheckPassword records a password outside the length bounds as a problem with field.
func CheckPassword(c *check.Checker, field, pw string) {
	n := len([]rune(pw))
	c.AddIf(n < MinPasswordLength || n > MaxPasswordLength, field, "must be 8 to 256 characters")
}

// New is a user as every way of signing up makes it: registered and active now, with the
// default profile and one parallel render; the caller sets the email, phone and name.
func New(id, tenantID, registerMode, passwordHash string, now time.Time) *User {
	return &User{
		ID: id, TenantID: tenantID, RegisterMode: registerMode, PasswordHash: passwordHash,
		LastActive: now, RegisteredAt: now, Profile: DefaultProfile(), ParallelRenderingCeiling: 1,
	}
}

// NewUser is the input of CreateUser.
type NewUser struct {
	TenantSlug, Email, Password, FullName string
	Admin, TenantAdmin                    bool
}

// CreateUser creates a user with an email and password in the tenant named by slug. It returns
// apperr Invalid for bad input, NotFound for an unknown tenant and Conflict for a taken email.
func (s *Service) CreateUser(ctx context.Context, in NewUser) (*User, error) {
	email, ok := emailrule.Normalize(in.Email)
	if !ok {
		return nil, check.Field("validation_failed", "the user is invalid", "email", emailrule.Message)
	}
	var c check.Checker
	CheckPassword(&c, "password", in.Password)
	if err := c.Reject("validation_failed", "the user is invalid"); err != nil {
		return nil, err
	}
	tenantID, err := s.tenants.IDBySlug(ctx, in.TenantSlug)
	if err != nil {
		return nil, err
	}
	hash, err := s.hasher.Hash(in.Password)
	if err != nil {
		return nil, err
	}
	now := s.now()
	u := New(s.newID(), tenantID, "Email", hash, now)
	u.Email, u.IsAdmin, u.IsTenantAdmin = &email, in.Admin, in.TenantAdmin
	if name := strings.TrimSpace(in.FullName); name != "" {
		u.FullName = &name
	}
	if err := s.store.Create(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// UserByEmail returns the user of the tenant (by slug) with that email; apperr NotFound when
// the tenant or the user does not exist.
func (s *Service) UserByEmail(ctx context.Context, tenantSlug, email string) (*User, error) {
	tenantID, err := s.tenants.IDBySlug(ctx, tenantSlug)
	if err != nil {
		return nil, err
	}
	return s.store.UserByEmail(ctx, tenantID, strings.ToLower(strings.TrimSpace(email)))
}
