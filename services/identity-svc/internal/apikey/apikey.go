// Package apikey manages tenants' API keys: creation (the secret is shown once and only its
// SHA-256 hash, prefix and last four characters are kept), listing, revocation, and the
// gateway's validation hot path, which answers from an in-process cache that revocations
// invalidate, checks expiry and allowed addresses, rate-limits per key and counts usage in
// memory for a periodic flush instead of writing per call.
package apikey

import (
	"context"
	"crypto/subtle"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// Scopes returns the scope values a key may carry.
func Scopes() []string {
	return []string{
		"renders:create", "renders:read", "renders:cancel", "projects:read", "projects:write", "templates:read",
		"exports:read", "exports:download", "users:read", "users:write", "webhooks:manage",
	}
}

// Limits of keys.
const (
	MaxActivePerTenant  = 50
	ListLimit           = 100
	MaxAllowedIPs       = 50
	DefaultRateLimitRPM = 600
	MaxRateLimitRPM     = 100000
)

// Key is a stored API key; it never holds the secret.
type Key struct {
	ID           string
	TenantID     string
	Name         string
	Environment  string
	Prefix       string
	Last4        string
	Hash         string
	Scopes       []string
	AllowedIPs   []string
	RateLimitRPM int
	Active       bool
	ExpiresAt    *time.Time
	LastUsedAt   *time.Time
	UsageCount   int64
	CreatedBy    string
	CreatedAt    time.Time
	RevokedAt    *time.Time
	// TenantOpen reports whether the key's tenant was Active or Trial when the key was read by
	// its hash (the validation path); the tenant's status changes drop the key from the cache.
	TenantOpen bool
}

// New is the input of Create.
type New struct {
	Name         string
	Environment  string
	Scopes       []string
	AllowedIPs   []string
	RateLimitRPM *int
	ExpiresAt    *time.Time
}

// Revocation records who revoked a key and why.
type Revocation struct {
	Reason, By string
	At         time.Time
}

// Usage is the use of one key since the last flush.
type Usage struct {
	KeyID, TenantID string
	Count           int64
	LastUsedAt      time.Time
}

// Store persists keys. Lookups return apperr NotFound.
type Store interface {
	// Create inserts the key and its created event in one transaction; apperr Conflict when
	// the tenant already has MaxActivePerTenant active keys.
	Create(ctx context.Context, k *Key) error
	List(ctx context.Context, tenantID string, limit int) ([]*Key, error)
	Get(ctx context.Context, tenantID, id string) (*Key, error)
	ByHash(ctx context.Context, hash string) (*Key, error)
	// Revoke deactivates the key and records its revoked event in one transaction; it
	// reports false when the key was already revoked.
	Revoke(ctx context.Context, k *Key, r Revocation) (bool, error)
	// AddUsage adds counts and last-use times, and the tenants' daily API calls.
	AddUsage(ctx context.Context, usage []Usage) error
}

// Limiter refuses a caller over its rate with apperr RateLimited.
type Limiter interface {
	Allow(ctx context.Context, key string, perMinute int) error
}

// Service implements the API key operations.
type Service struct {
	store   Store
	usage   *Counter
	limiter Limiter
	brand   string
	now     func() time.Time
	newID   func() string
}

// NewService returns a Service minting keys for brand.
func NewService(store Store, usage *Counter, limiter Limiter, brand string, now func() time.Time, newID func() string) *Service {
	return &Service{store: store, usage: usage, limiter: limiter, brand: brand, now: now, newID: newID}
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

// Create validates and stores a key and returns it with its secret, which is never available
// again. It returns apperr NotFound or Forbidden for callers who may not manage the tenant,
// Invalid for bad input and Conflict when the tenant has too many active keys.
func (s *Service) Create(ctx context.Context, a actor.Actor, tenantID string, in New) (*Key, string, error) {
	if err := authorize(a, tenantID); err != nil {
		return nil, "", err
	}
	if err := s.validate(&in); err != nil {
		return nil, "", err
	}
	m, err := Mint(s.brand, in.Environment)
	if err != nil {
		return nil, "", err
	}
	k := &Key{
		ID: s.newID(), TenantID: tenantID, Name: in.Name, Environment: in.Environment, Prefix: m.Prefix,
		Last4: m.Last4, Hash: m.Hash, Scopes: in.Scopes, AllowedIPs: in.AllowedIPs, RateLimitRPM: *in.RateLimitRPM,
		Active: true, ExpiresAt: in.ExpiresAt, CreatedBy: a.UserID, CreatedAt: s.now(),
	}
	if err := s.store.Create(ctx, k); err != nil {
		return nil, "", err
	}
	return k, m.Secret, nil
}

func (s *Service) validate(in *New) error {
	var c check.Checker
	in.Name = strings.TrimSpace(in.Name)
	c.AddIf(in.Name == "" || utf8.RuneCountInString(in.Name) > 100, "name", "is required and at most 100 characters")
	if in.Environment == "" {
		in.Environment = EnvLive
	}
	c.AddIf(in.Environment != EnvLive && in.Environment != EnvTest, "environment", "must be Live or Test")
	c.AddIf(len(in.Scopes) == 0, "scopes", "at least one scope is required")
	allowed := Scopes()
	scopes := make([]string, 0, len(in.Scopes))
	for _, sc := range in.Scopes {
		if !slices.Contains(allowed, sc) {
			c.Add("scopes", "unknown scope "+sc+"; allowed: "+strings.Join(allowed, ", "))
			break
		}
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	in.Scopes = scopes
	c.AddIf(len(in.AllowedIPs) > MaxAllowedIPs, "allowed_ips", "must have at most 50 entries")
	ips := make([]string, 0, len(in.AllowedIPs))
	for _, ip := range in.AllowedIPs {
		p, ok := parseCIDR(ip)
		if !ok {
			c.Add("allowed_ips", "each must be an IP address or CIDR range, like 203.0.113.0/24")
			break
		}
		ips = append(ips, rangeString(p))
	}
	in.AllowedIPs = ips
	if in.RateLimitRPM == nil {
		rpm := DefaultRateLimitRPM
		in.RateLimitRPM = &rpm
	}
	c.AddIf(*in.RateLimitRPM < 1 || *in.RateLimitRPM > MaxRateLimitRPM, "rate_limit_rpm", "must be between 1 and 100000")
	c.AddIf(in.ExpiresAt != nil && !in.ExpiresAt.After(s.now()), "expires_at", "must be in the future")
	return c.Reject("validation_failed", "the API key is invalid")
}

// parseCIDR accepts an address (without a zone) or a prefix and answers the masked prefix. The
// gateway matches an IPv4 client by its IPv4 address, so an IPv4-mapped IPv6 range
// (::ffff:203.0.113.0/120) becomes the IPv4 range it maps (203.0.113.0/24), and one shorter
// than /96, which would mix IPv4 and IPv6 clients, is refused.
func parseCIDR(s string) (netip.Prefix, bool) {
	s = strings.TrimSpace(s)
	p, err := netip.ParsePrefix(s)
	if err != nil {
		addr, err := netip.ParseAddr(s)
		if err != nil || addr.Zone() != "" {
			return netip.Prefix{}, false
		}
		p = netip.PrefixFrom(addr, addr.BitLen())
	}
	if p.Addr().Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, false
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), true
}

// rangeString writes a single address as the address (as it was given) and a wider range in
// CIDR notation.
func rangeString(p netip.Prefix) string {
	if p.IsSingleIP() {
		return p.Addr().String()
	}
	return p.String()
}

// List answers the tenant's keys, newest first (at most ListLimit). It returns apperr NotFound
// or Forbidden for callers who may not manage the tenant.
func (s *Service) List(ctx context.Context, a actor.Actor, tenantID string) ([]*Key, error) {
	if err := authorize(a, tenantID); err != nil {
		return nil, err
	}
	keys, err := s.store.List(ctx, tenantID, ListLimit)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		s.usage.Overlay(k)
	}
	return keys, nil
}

// Revoke deactivates a key with an optional reason (its revoked event drops it from every
// process's cache).
// Revoking a revoked key changes nothing. It returns apperr NotFound for a key of another
// tenant or a caller who may not read the tenant, Forbidden for a caller who may not manage it,
// and Invalid for a reason over 500 characters.
func (s *Service) Revoke(ctx context.Context, a actor.Actor, tenantID, keyID, reason string) error {
	if err := authorize(a, tenantID); err != nil {
		return err
	}
	reason = strings.TrimSpace(reason)
	if utf8.RuneCountInString(reason) > 500 {
		return check.Field("validation_failed", "the reason is too long", "reason", "must be at most 500 characters")
	}
	k, err := s.store.Get(ctx, tenantID, keyID)
	if err != nil {
		return err
	}
	if _, err := s.store.Revoke(ctx, k, Revocation{Reason: reason, By: a.UserID, At: s.now()}); err != nil {
		return err
	}
	return nil
}

// Validation is the answer to the gateway.
type Validation struct {
	Valid  bool
	Reason string
	Key    *Key
}

// Reasons a key is refused.
const (
	ReasonMalformed    = "malformed"
	ReasonUnknown      = "unknown"
	ReasonRevoked      = "revoked"
	ReasonExpired      = "expired"
	ReasonIPNotAllowed = "ip_not_allowed"
	// ReasonTenantInactive refuses the keys of a suspended or cancelled tenant.
	ReasonTenantInactive = "tenant_inactive"
)

// Validate checks a key presented to the gateway by its prefix and hex SHA-256 hash, and the
// client address when given. Malformed input is refused without a lookup. A valid key is counted and rate-limited to its rate_limit_rpm. It returns
// apperr Forbidden for a caller that is not a service, RateLimited (with RetryAfter) when the
// key is over its rate, and Unavailable when the store cannot be reached.
func (s *Service) Validate(ctx context.Context, a actor.Actor, prefix, hash, ip string) (Validation, error) {
	if !a.Service {
		return Validation{}, apperr.E(apperr.Forbidden, "service_required", "a service token is required")
	}
	hash = strings.ToLower(strings.TrimSpace(hash))
	if !ValidPrefix(prefix) || !ValidHash(hash) {
		return Validation{Reason: ReasonMalformed}, nil
	}
	k, err := s.store.ByHash(ctx, hash)
	if apperr.Is(err, apperr.NotFound) || (err == nil && !equalConstantTime(k.Prefix, prefix)) {
		return Validation{Reason: ReasonUnknown}, nil
	}
	if err != nil {
		return Validation{}, err
	}
	switch {
	case !k.Active:
		return Validation{Reason: ReasonRevoked}, nil
	case !k.TenantOpen:
		return Validation{Reason: ReasonTenantInactive}, nil
	case k.ExpiresAt != nil && !s.now().Before(*k.ExpiresAt):
		return Validation{Reason: ReasonExpired}, nil
	case !ipAllowed(k.AllowedIPs, ip):
		return Validation{Reason: ReasonIPNotAllowed}, nil
	}
	if err := s.limiter.Allow(ctx, "apikey:"+k.ID, k.RateLimitRPM); err != nil {
		return Validation{}, err
	}
	s.usage.Add(k.ID, k.TenantID, s.now())
	return Validation{Valid: true, Key: k}, nil
}

// ipAllowed reports whether ip is in one of the ranges; no ranges allows every address, and a
// restricted key needs an address.
func ipAllowed(ranges []string, ip string) bool {
	if len(ranges) == 0 {
		return true
	}
	addr, err := netip.ParseAddr(strings.TrimSpace(ip))
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, r := range ranges {
		if p, ok := parseCIDR(r); ok && p.Contains(addr) {
			return true
		}
	}
	return false
}

// FlushUsage writes the use counted since the last flush; on failure it is kept for the next.
func (s *Service) FlushUsage(ctx context.Context) error { return s.usage.Flush(ctx, s.store) }

func equalConstantTime(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
