package auth

import (
	"context"
	"strings"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	emailrule "github.com/motionstudio/platform/pkg/email"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
)

// OAuthIdentity is an account as an external identity provider describes it.
type OAuthIdentity struct {
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
}

// OAuthProvider exchanges an authorization code for the provider's account. It returns apperr
// Unauthenticated for a refused code and Unavailable when the provider cannot be reached.
type OAuthProvider interface {
	Exchange(ctx context.Context, code, redirectURI string) (*OAuthIdentity, error)
}

// OAuthLinks stores which provider accounts belong to which users. UserByOAuth returns apperr
// NotFound for an unlinked provider account. CreateOAuthUser inserts the user, its link and its
// user.registered event in one transaction (apperr Conflict when the email is taken).
type OAuthLinks interface {
	UserByOAuth(ctx context.Context, tenantID, provider, subject string) (*User, error)
	LinkOAuth(ctx context.Context, tenantID, userID, provider, subject string) error
	CreateOAuthUser(ctx context.Context, u *User, provider, subject string) error
}

// OAuthLogin is the input of LoginOAuth.
type OAuthLogin struct {
	Provider, TenantSlug, Code, RedirectURI string
	DeviceID, DeviceName                    string
	IPAddress, UserAgent                    string
}

// LoginOAuth logs in with an external provider's authorization code. A provider account already
// linked logs in its user; otherwise it is linked to the tenant's user with the same email when
// the provider verified that email, or a new account is created. Accounts with a verified second
// factor answer an MFAPending, as Login does. It returns apperr NotFound for an unknown provider
// or tenant, Invalid for bad input, Forbidden for a closed tenant, Conflict when an account has
// the email but the provider did not verify it, Unauthenticated for a refused code or a banned
// account, Unavailable when the provider cannot be reached and RateLimited.
func (s *Service) LoginOAuth(ctx context.Context, in OAuthLogin) (*Grant, *MFAPending, error) {
	p, ok := s.OAuth[in.Provider]
	if !ok {
		return nil, nil, apperr.E(apperr.NotFound, "unknown_provider", "The identity provider is not configured.")
	}
	if strings.TrimSpace(in.TenantSlug) == "" || in.Code == "" || len(in.Code) > 2048 || len(in.RedirectURI) > 2048 {
		return nil, nil, check.Field("validation_failed", "tenant_slug and code are required.", "code", "tenant_slug and a code of at most 2048 characters are required")
	}
	slug := strings.ToLower(strings.TrimSpace(in.TenantSlug))
	if err := s.Limiter.Check(ctx, "login:ip:"+in.IPAddress, s.Limits.LoginPerIP); err != nil {
		return nil, nil, err
	}
	tenant, err := s.Tenants.BySlug(ctx, slug)
	if err != nil {
		return nil, nil, err
	}
	if !tenant.Open() {
		return nil, nil, apperr.E(apperr.Forbidden, "tenant_closed", "The tenant does not accept logins.")
	}
	id, err := p.Exchange(ctx, in.Code, in.RedirectURI)
	if err != nil {
		return nil, nil, err
	}
	u, err := s.oauthUser(ctx, tenant, in.Provider, id)
	if err != nil {
		return nil, nil, err
	}
	if u.Banned(s.Now()) {
		return nil, nil, errInvalidCredentials()
	}
	if u, err = s.recordLogin(ctx, u.ID, ""); err != nil {
		return nil, nil, err
	}
	factors, err := s.Factors.VerifiedFactors(ctx, u.ID)
	if err != nil {
		return nil, nil, err
	}
	login := Login{DeviceID: in.DeviceID, DeviceName: in.DeviceName, IPAddress: in.IPAddress, UserAgent: in.UserAgent}
	if len(factors) > 0 {
		pending, err := s.pendMFA(ctx, u, factors, login)
		return nil, pending, err
	}
	g, err := s.openSession(ctx, u, tenant, login)
	return g, nil, err
}

// oauthUser finds, links or creates the tenant's user of a provider account.
func (s *Service) oauthUser(ctx context.Context, tenant *Tenant, provider string, id *OAuthIdentity) (*User, error) {
	u, err := s.OAuthLinks.UserByOAuth(ctx, tenant.ID, provider, id.Subject)
	if err == nil || !apperr.Is(err, apperr.NotFound) {
		return u, err
	}
	email, emailOK := emailrule.Normalize(id.Email)
	if emailOK {
		existing, err := s.Users.UserByEmail(ctx, tenant.ID, email)
		switch {
		case err == nil && id.EmailVerified:
			return existing, s.OAuthLinks.LinkOAuth(ctx, tenant.ID, existing.ID, provider, id.Subject)
		case err == nil:
			return nil, apperr.E(apperr.Conflict, "account_exists",
				"An account with this email exists; the identity provider did not verify the email, so it cannot be linked.")
		case !apperr.Is(err, apperr.NotFound):
			return nil, err
		}
	}
	hash, err := s.Hasher.Hash(randomToken())
	if err != nil {
		return nil, err
	}
	now := s.Now()
	u = account.New(s.NewID(), tenant.ID, provider, hash, now)
	if emailOK {
		u.Email, u.EmailVerified = &email, id.EmailVerified
	}
	if name := strings.TrimSpace(id.Name); name != "" {
		name = truncate(name, 200)
		u.FullName = &name
	}
	if err := s.OAuthLinks.CreateOAuthUser(ctx, u, provider, id.Subject); err != nil {
		return nil, err
	}
	return u, nil
}
