// Package auth holds the rules of registration, login, refresh-token rotation, sessions and
// password changes. It declares the stores, hasher, token issuer and rate limiter it consumes;
// the store, session and app packages provide them. Failures are apperr errors: Invalid for bad
// input, Unauthenticated for refused credentials or tokens, Forbidden, NotFound, Conflict and
// RateLimited.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/motionstudio/platform/services/identity-svc/internal/account"
	"github.com/motionstudio/platform/services/identity-svc/internal/notify"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
)

// Register modes.
const (
	ModeEmail = "Email"
	ModePhone = "Phone"
)

// User is the service's one user type (package account); auth reads and changes it through Users.
type User = account.User

// Tenant is the service's one tenant type (package tenant).
type Tenant = tenant.Tenant

// Session is one login of a user on a device.
type Session struct {
	ID         string
	UserID     string
	TenantID   string
	DeviceID   string
	DeviceName string
	UserAgent  string
	IPAddress  string
	IssuedAt   time.Time
	LastUsedAt time.Time
}

// Use is where and when a refresh token was presented.
type Use struct {
	IPAddress string
	UserAgent string
	At        time.Time
}

// Users is what auth needs of the user repository: lookups return apperr NotFound, Create
// returns Conflict for an email or phone taken in the tenant and records the user's
// identity.user.registered.v1 event, Update locks the user, applies fn and saves it in one
// transaction (fn's error unchanged), Touch sets only the last activity in one statement.
type Users interface {
	User(ctx context.Context, tenantID, userID string) (*User, error)
	UserWithTenant(ctx context.Context, tenantID, userID string) (*User, *Tenant, error)
	UserByEmailWithTenant(ctx context.Context, slug, email string) (*User, *Tenant, error)
	UserByPhoneWithTenant(ctx context.Context, slug, phone string) (*User, *Tenant, error)
	UserByEmail(ctx context.Context, tenantID, email string) (*User, error)
	UserByPhone(ctx context.Context, tenantID, phone string) (*User, error)
	Create(ctx context.Context, u *User) error
	Update(ctx context.Context, userID string, fn func(*User) error) (*User, error)
	Touch(ctx context.Context, userID string, at time.Time) (*User, error)
}

// Tenants is what auth needs of the tenant repository; both return apperr NotFound.
type Tenants interface {
	Get(ctx context.Context, id string) (*Tenant, error)
	BySlug(ctx context.Context, slug string) (*Tenant, error)
}

// SessionStore keeps sessions and the hashes of their refresh tokens. Get returns apperr
// NotFound. Rotate exchanges the session's current token old for next and answers the token
// the caller now holds: next, or, when old was replaced less than grace ago and its successor is
// still unused, that same successor (an idempotent retry, never a second branch). It returns
// apperr Unauthenticated with code invalid_refresh_token for an unknown token or a revoked
// session, and with code refresh_token_reused after revoking the session for any other
// presentation of a replaced token.
type SessionStore interface {
	Create(ctx context.Context, s Session, refreshHash string) error
	Rotate(ctx context.Context, old, next string, grace time.Duration, use Use) (*Session, string, error)
	Get(ctx context.Context, id string) (*Session, error)
	List(ctx context.Context, userID string) ([]Session, error)
	Revoke(ctx context.Context, id string) error
	RevokeOthers(ctx context.Context, userID, keepID string) error
}

// Hasher hashes and verifies passwords; all three return apperr Unavailable while the hashing
// queue is full, Ready without hashing.
type Hasher interface {
	Hash(plain string) (string, error)
	Verify(plain, encoded string) (match, rehash bool, err error)
	Ready() error
}

// Subject is whom an access token speaks for.
type Subject struct {
	UserID, TenantID, SessionID string
	Admin, TenantAdmin          bool
}

// Issued is a signed token and its lifetime.
type Issued struct {
	Token     string
	ExpiresIn time.Duration
}

// Tokens mints access tokens; ttl 0 is the configured default.
type Tokens interface {
	Access(s Subject, ttl time.Duration) (Issued, error)
}

// Limit is a rate: Rate events per Period, Burst of them at once.
type Limit struct {
	Rate   int
	Burst  int
	Period time.Duration
}

// PerMinute allows n events a minute, all of them at once if they come in a burst.
func PerMinute(n int) Limit { return Limit{Rate: n, Burst: n, Period: time.Minute} }

// Limiter refuses events over a rate with apperr RateLimited.
type Limiter interface {
	Check(ctx context.Context, key string, lim Limit) error
}

// Limits are the attempt rates of login, registration, verification and password reset.
// LoginPerAccount counts one account's logins from one client address (tight);
// LoginPerAccountAll counts them from every address (looser), so that someone guessing from
// elsewhere exhausts their own allowance long before the owner's.
type Limits struct {
	LoginPerIP, LoginPerAccount, LoginPerTenant Limit
	LoginPerAccountAll                          Limit
	RegisterPerIP, RegisterPerTenant            Limit
	VerifyPerIP                                 Limit
	ResetPerIP, ResetPerAccount, ResetPerTenant Limit
}

// Challenge purposes.
const (
	PurposeVerifyEmail = "verify-email"
	PurposeVerifyPhone = "verify-phone"
	PurposeReset       = "reset"
)

// Challenge is a one-time token (and code) sent to a person: the store keeps only hashes.
type Challenge struct {
	Purpose   string
	TokenHash string
	CodeHash  string
	UserID    string
	TenantID  string
	// Target is the email or phone number the challenge was sent to.
	Target string
	// Extra is what the challenge's owner needs to finish (JSON).
	Extra string
}

// Challenges keeps one-time challenges. Consume returns the challenge and deletes it when the
// code hash matches; it returns apperr NotFound for an unknown, expired, used or burnt challenge
// and Invalid (wrong_code) for a wrong code, deleting the challenge at the maxAttempts-th.
// Peek returns a challenge without using it (apperr NotFound), Fail counts a wrong attempt
// (deleting the challenge at the maxAttempts-th) and Take deletes it, reporting whether this
// caller was the one that did.
type Challenges interface {
	Put(ctx context.Context, c Challenge, ttl time.Duration) error
	Consume(ctx context.Context, purpose, tokenHash, codeHash string, maxAttempts int) (*Challenge, error)
	Peek(ctx context.Context, purpose, tokenHash string) (*Challenge, error)
	Fail(ctx context.Context, purpose, tokenHash string, maxAttempts int) error
	Take(ctx context.Context, purpose, tokenHash string) (bool, error)
}

// Notifier sends messages to people.
type Notifier interface {
	Send(ctx context.Context, m notify.Message) error
}

// Messages configures the one-time messages.
type Messages struct {
	// LinkBase is the web app's address that links in messages point to.
	LinkBase                   string
	EmailCodeTTL, PhoneCodeTTL time.Duration
	ResetTTL                   time.Duration
	MaxAttempts                int
}

// Deps are what a Service is built from.
type Deps struct {
	Users    Users
	Tenants  Tenants
	Sessions SessionStore
	Hasher   Hasher
	Tokens   Tokens
	Limiter  Limiter
	Limits   Limits

	Challenges Challenges
	Notifier   Notifier
	Messages   Messages
	// Resets keeps the accepted password-reset requests until RunResets answers them.
	Resets ResetJobs

	Factors Factors
	Sealer  Sealer
	MFA     MFAConfig

	// OAuth maps provider names (from configuration) to their adapters.
	OAuth      map[string]OAuthProvider
	OAuthLinks OAuthLinks
	// Log records messages that could not be sent after the state change they follow committed.
	Log *slog.Logger
	// Grace is how long a rotated refresh token is still accepted.
	Grace time.Duration
	Now   func() time.Time
	NewID func() string
}

// Service implements the auth rules.
type Service struct {
	Deps
	dummyHash string
	// wake tells this process's RunResets that RequestReset queued a request.
	wake chan struct{}
}

// NewService returns a Service. It hashes a dummy password once, so that logins of unknown
// accounts spend the same time as real ones.
func NewService(d Deps) (*Service, error) {
	dummy, err := d.Hasher.Hash(randomToken())
	if err != nil {
		return nil, err
	}
	return &Service{Deps: d, dummyHash: dummy, wake: make(chan struct{}, 1)}, nil
}

// Grant is the outcome of a successful login or refresh.
type Grant struct {
	AccessToken  string
	RefreshToken string
	ExpiresIn    time.Duration
	SessionID    string
	User         *User
	Tenant       *Tenant
}

// randomToken returns 256 random bits, base64url encoded.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashToken is the SHA-256 of an opaque token, hex encoded: only this is stored.
func HashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}
