// Package oauth is the HTTP adapter for external identity providers: it exchanges an
// authorization code at the provider's OAuth 2.0 token endpoint (RFC 6749 section 4.1.3) and
// reads the account from its OpenID Connect UserInfo endpoint with the access token. A code the
// provider refuses is apperr Unauthenticated; an unreachable or misbehaving provider is apperr
// Unavailable.
package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/telemetry"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

// Config describes one provider.
type Config struct {
	Name         string
	ClientID     string
	ClientSecret string
	TokenURL     string
	UserInfoURL  string
	// RedirectURI is sent when the login request names none; it must match the one the
	// authorization request used.
	RedirectURI string
}

// Provider exchanges codes with one identity provider. It implements auth.OAuthProvider.
type Provider struct {
	cfg  Config
	http *http.Client
}

// New returns a Provider; timeout bounds each call to the provider.
func New(cfg Config, timeout time.Duration) *Provider {
	return &Provider{cfg: cfg, http: &http.Client{Timeout: timeout, Transport: telemetry.Transport(nil)}}
}

// Exchange turns an authorization code into the provider's view of the account.
func (p *Provider) Exchange(ctx context.Context, code, redirectURI string) (*auth.OAuthIdentity, error) {
	if redirectURI == "" {
		redirectURI = p.cfg.RedirectURI
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, p.unavailable("token request", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(p.cfg.ClientID), url.QueryEscape(p.cfg.ClientSecret))
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		Error       string `json:"error"`
	}
	status, err := p.call(req, &tok)
	if err != nil {
		return nil, err
	}
	if status == http.StatusBadRequest || status == http.StatusUnauthorized {
		return nil, apperr.E(apperr.Unauthenticated, "oauth_code_rejected", "The identity provider refused the authorization code.")
	}
	if status != http.StatusOK || tok.AccessToken == "" {
		return nil, p.unavailable("token", fmt.Errorf("status %d, error %q", status, tok.Error))
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.UserInfoURL, nil)
	if err != nil {
		return nil, p.unavailable("userinfo request", err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Accept", "application/json")
	var info struct {
		Sub           string `json:"sub"`
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"`
		Name          string `json:"name"`
	}
	status, err = p.call(req, &info)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK || info.Sub == "" {
		return nil, p.unavailable("userinfo", fmt.Errorf("status %d without a subject", status))
	}
	return &auth.OAuthIdentity{Subject: info.Sub, Email: info.Email, EmailVerified: truthy(info.EmailVerified), Name: info.Name}, nil
}

// call sends req and decodes a JSON answer of at most 1 MiB into dst, whatever the status.
func (p *Provider) call(req *http.Request, dst any) (int, error) {
	resp, err := p.http.Do(req)
	if err != nil {
		return 0, p.unavailable(req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, p.unavailable(req.URL.Path, err)
	}
	if len(body) > 0 && json.Unmarshal(body, dst) != nil && resp.StatusCode == http.StatusOK {
		return 0, p.unavailable(req.URL.Path, fmt.Errorf("answer is not JSON"))
	}
	return resp.StatusCode, nil
}

func (p *Provider) unavailable(op string, err error) error {
	return apperr.Wrap(fmt.Errorf("oauth %s: %s: %w", p.cfg.Name, op, err), apperr.Unavailable, "oauth_provider_unavailable",
		"The identity provider could not be reached.")
}

// truthy reads email_verified, which some providers send as a string.
func truthy(v any) bool {
	switch b := v.(type) {
	case bool:
		return b
	case string:
		return b == "true"
	default:
		return false
	}
}
