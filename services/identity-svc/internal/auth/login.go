package auth

import (
	"context"
	"regexp"
	"strings"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	emailrule "github.com/motionstudio/platform/pkg/email"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
)

var phonePattern = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// errInvalidCredentials is the one answer for an unknown account, a wrong password and a banned
// account, so none of them can be told apart.
func errInvalidCredentials() error {
	return apperr.E(apperr.Unauthenticated, "invalid_credentials", "The account or the password is not correct.")
}

// givenEmail applies the email rule to an optional email: it returns "" for an empty one, the
// stored form of an address and apperr Invalid for anything else, so a display-name form such as
// "bob <bob@x.com>" is refused with the same message by every entry point.
func givenEmail(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", nil
	}
	email, ok := emailrule.Normalize(raw)
	if !ok {
		return "", check.Field("validation_failed", "The email is not an email address.", "email", emailrule.Message)
	}
	return email, nil
}

// normalizePhone drops spaces, dashes and brackets; it reports false when the rest is not E.164.
func normalizePhone(raw string) (string, bool) {
	p := strings.Map(func(r rune) rune {
		if strings.ContainsRune(" -()", r) {
			return -1
		}
		return r
	}, raw)
	return p, phonePattern.MatchString(p)
}

// Registration is the input of Register.
type Registration struct {
	TenantSlug, Email, Phone, Password, FullName, AffiliateCode string
	IPAddress                                                   string
}

// Register creates an unverified account. It returns apperr Invalid for bad input, NotFound for
// an unknown tenant, Forbidden for a tenant that is not Active or Trial, Conflict when the email
// or phone is taken in the tenant and RateLimited when the address or tenant tries too often.
func (s *Service) Register(ctx context.Context, in Registration) (*User, error) {
	var c check.Checker
	email, phone := strings.TrimSpace(in.Email), strings.TrimSpace(in.Phone)
	c.AddIf(email == "" && phone == "", "email", "an email or a phone number is required")
	if email != "" {
		var ok bool
		if email, ok = emailrule.Normalize(email); !ok {
			c.Add("email", emailrule.Message)
		}
	}
	if phone != "" {
		var ok bool
		if phone, ok = normalizePhone(phone); !ok {
			c.Add("phone_number", "must be an E.164 number such as +4915112345678")
		}
	}
	account.CheckPassword(&c, "password", in.Password)
	name := strings.TrimSpace(in.FullName)
	c.AddIf(len([]rune(name)) > 200, "full_name", "must be at most 200 characters")
	c.AddIf(len(in.AffiliateCode) > 64, "affiliate_code", "must be at most 64 characters")
	c.AddIf(strings.TrimSpace(in.TenantSlug) == "", "tenant_slug", "is required")
	if err := c.Reject("validation_failed", "The registration is invalid."); err != nil {
		return nil, err
	}
	slug := strings.ToLower(strings.TrimSpace(in.TenantSlug))
	if err := s.Limiter.Check(ctx, "register:ip:"+in.IPAddress, s.Limits.RegisterPerIP); err != nil {
		return nil, err
	}
	if err := s.Limiter.Check(ctx, "register:tenant:"+slug, s.Limits.RegisterPerTenant); err != nil {
		return nil, err
	}
	tenant, err := s.Tenants.BySlug(ctx, slug)
	if err != nil {
		return nil, err
	}
	if !tenant.Open() {
		return nil, apperr.E(apperr.Forbidden, "tenant_closed", "The tenant does not accept registrations.")
	}
	hash, err := s.Hasher.Hash(in.Password)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	u := account.New(s.NewID(), tenant.ID, ModeEmail, hash, now)
	if code := strings.TrimSpace(in.AffiliateCode); code != "" {
		u.SignupAffiliateCode = &code
	}
	if email != "" {
		u.Email = &email
	}
	if phone != "" {
		u.Phone = &phone
		if email == "" {
			u.RegisterMode = ModePhone
		}
	}
	if name != "" {
		u.FullName = &name
	}
	if err := s.Users.Create(ctx, u); err != nil {
		if apperr.Is(err, apperr.Conflict) {
			return nil, apperr.Wrap(err, apperr.Conflict, "account_exists", "An account with this email or phone number already exists in the tenant.")
		}
		return nil, err
	}
	s.sendVerifications(ctx, u)
	return u, nil
}

// Login is the input of Login.
type Login struct {
	TenantSlug, Email, Phone, Password string
	DeviceID, DeviceName               string
	IPAddress, UserAgent               string
}

// Login checks credentials and opens a session, or, for an account with a verified second
// factor, answers an MFAPending whose token ChallengeMFA completes. An unknown tenant or
// account, a wrong password and a banned account all return the same apperr Unauthenticated
// (invalid_credentials) after the same argon2id work. It also returns apperr Invalid for bad
// input and RateLimited when the address, the account or the tenant tries too often.
func (s *Service) Login(ctx context.Context, in Login) (*Grant, *MFAPending, error) {
	u, tenant, err := s.checkCredentials(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	factors, err := s.Factors.VerifiedFactors(ctx, u.ID)
	if err != nil {
		return nil, nil, err
	}
	if len(factors) > 0 {
		p, err := s.pendMFA(ctx, u, factors, in)
		return nil, p, err
	}
	g, err := s.openSession(ctx, u, tenant, in)
	return g, nil, err
}

// checkCredentials is the password step of a login: it answers the account whose password
// matched and re-hashes the password when its parameters are outdated.
func (s *Service) checkCredentials(ctx context.Context, in Login) (*User, *Tenant, error) {
	if err := s.checkLogin(in); err != nil {
		return nil, nil, err
	}
	// Refused now, the excess of a flood costs no lookups or rate-limit checks.
	if err := s.Hasher.Ready(); err != nil {
		return nil, nil, err
	}
	slug := strings.ToLower(strings.TrimSpace(in.TenantSlug))
	email, err := givenEmail(in.Email)
	if err != nil {
		return nil, nil, err
	}
	phone, _ := normalizePhone(in.Phone)
	account := email
	if account == "" {
		account = phone
	}
	if err := s.Limiter.Check(ctx, "login:ip:"+in.IPAddress, s.Limits.LoginPerIP); err != nil {
		return nil, nil, err
	}
	if err := s.Limiter.Check(ctx, "login:tenant:"+slug, s.Limits.LoginPerTenant); err != nil {
		return nil, nil, err
	}
	if err := s.Limiter.Check(ctx, "login:account-ip:"+slug+":"+account+":"+in.IPAddress, s.Limits.LoginPerAccount); err != nil {
		return nil, nil, err
	}
	if err := s.Limiter.Check(ctx, "login:account:"+slug+":"+account, s.Limits.LoginPerAccountAll); err != nil {
		return nil, nil, err
	}
	u, tenant, err := s.findAccount(ctx, slug, email, phone)
	if err != nil {
		return nil, nil, err
	}
	stored := s.dummyHash
	if u != nil {
		stored = u.PasswordHash
	}
	match, rehash, err := s.Hasher.Verify(in.Password, stored)
	if err != nil {
		return nil, nil, err
	}
	if u == nil || !match || u.Banned(s.Now()) {
		return nil, nil, errInvalidCredentials()
	}
	newHash := ""
	if rehash {
		if newHash, err = s.Hasher.Hash(in.Password); err != nil {
			return nil, nil, err
		}
	}
	if u, err = s.recordLogin(ctx, u.ID, newHash); err != nil {
		return nil, nil, err
	}
	return u, tenant, nil
}

func (s *Service) checkLogin(in Login) error {
	var c check.Checker
	c.AddIf(strings.TrimSpace(in.TenantSlug) == "", "tenant_slug", "is required")
	c.AddIf(strings.TrimSpace(in.Email) == "" && strings.TrimSpace(in.Phone) == "", "email", "an email or a phone number is required")
	c.AddIf(in.Password == "" || len(in.Password) > 4*account.MaxPasswordLength, "password", "is required")
	c.AddIf(len(in.DeviceID) > 200 || len(in.DeviceName) > 200, "device_name", "device_id and device_name must be at most 200 characters")
	return c.Reject("validation_failed", "The login request is invalid.")
}

// findAccount returns the user and tenant (read together in one query), or a nil user (and no
// error) when either is unknown or the tenant is closed, so the caller still spends the hashing
// time.
func (s *Service) findAccount(ctx context.Context, slug, email, phone string) (*User, *Tenant, error) {
	var (
		u      *User
		tenant *Tenant
		err    error
	)
	switch {
	case email != "":
		u, tenant, err = s.Users.UserByEmailWithTenant(ctx, slug, email)
	case phone != "":
		u, tenant, err = s.Users.UserByPhoneWithTenant(ctx, slug, phone)
	default:
		return nil, nil, nil
	}
	if apperr.Is(err, apperr.NotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !tenant.Open() {
		return nil, tenant, nil
	}
	return u, tenant, nil
}

// openSession creates a session with a fresh refresh token and mints its access token.
func (s *Service) openSession(ctx context.Context, u *User, tenant *Tenant, in Login) (*Grant, error) {
	now := s.Now()
	sess := Session{
		ID: s.NewID(), UserID: u.ID, TenantID: u.TenantID, DeviceID: in.DeviceID, DeviceName: in.DeviceName,
		UserAgent: truncate(in.UserAgent, 512), IPAddress: in.IPAddress, IssuedAt: now, LastUsedAt: now,
	}
	refresh := randomToken()
	if err := s.Sessions.Create(ctx, sess, HashToken(refresh)); err != nil {
		return nil, err
	}
	return s.grant(u, tenant, sess.ID, refresh)
}

func (s *Service) grant(u *User, tenant *Tenant, sessionID, refresh string) (*Grant, error) {
	issued, err := s.Tokens.Access(Subject{
		UserID: u.ID, TenantID: u.TenantID, SessionID: sessionID, Admin: u.IsAdmin, TenantAdmin: u.IsTenantAdmin,
	}, 0)
	if err != nil {
		return nil, err
	}
	return &Grant{
		AccessToken: issued.Token, RefreshToken: refresh, ExpiresIn: issued.ExpiresIn,
		SessionID: sessionID, User: u, Tenant: tenant,
	}, nil
}

// Refresh exchanges a refresh token for a new one and a new access token of the same session.
// It returns apperr Invalid for an empty token and Unauthenticated for an unknown or revoked
// token, a reused one (the session is then revoked), and a banned user, a suspended or
// cancelled tenant, or a session issued before its tenant's last suspension (the session is
// then revoked too).
func (s *Service) Refresh(ctx context.Context, refreshToken string, use Use) (*Grant, error) {
	if refreshToken == "" || len(refreshToken) > 512 {
		return nil, check.Field("validation_failed", "The refresh token is required.", "refresh_token", "is required")
	}
	use.UserAgent, use.At = truncate(use.UserAgent, 512), s.Now()
	sess, next, err := s.Sessions.Rotate(ctx, refreshToken, randomToken(), s.Grace, use)
	if err != nil {
		return nil, err
	}
	u, tenant, err := s.Users.UserWithTenant(ctx, sess.TenantID, sess.UserID)
	if apperr.Is(err, apperr.NotFound) || (err == nil && (u.Banned(s.Now()) || !tenant.Open() ||
		(tenant.TokensNotBefore != nil && sess.IssuedAt.Before(*tenant.TokensNotBefore)))) {
		if rerr := s.Sessions.Revoke(ctx, sess.ID); rerr != nil {
			return nil, rerr
		}
		return nil, apperr.E(apperr.Unauthenticated, "invalid_refresh_token", "The refresh token is not valid.")
	}
	if err != nil {
		return nil, err
	}
	return s.grant(u, tenant, sess.ID, next)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
