package tenant

import (
	"context"
	"net"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/check"
	emailrule "github.com/motionstudio/platform/pkg/email"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// Branding is how a tenant's pages, emails and embeds look. Empty strings are unset.
type Branding struct {
	DisplayName, LogoURL, LogoDarkURL, FaviconURL, OGImageURL              string
	PrimaryColor, SecondaryColor, AccentColor, BackgroundColor, FontFamily string
	EmailFromName, EmailFromAddress, EmailReplyTo, EmailFooterHTML         string
	SupportURL, TermsURL, PrivacyURL, WatermarkText, WatermarkImageURL     string
	EmbedEnabled, WatermarkEnabled                                         bool
	EmbedAllowedHosts                                                      []string
}

// BrandingStore persists branding. Branding returns (nil, nil) when none was stored.
type BrandingStore interface {
	Branding(ctx context.Context, tenantID string) (*Branding, error)
	// PutBranding stores b and records the tenant.updated event in one transaction.
	PutBranding(ctx context.Context, t *Tenant, b *Branding, c Change) error
}

// Limits of branding fields.
const (
	maxFooterHTML = 10000
	maxEmbedHosts = 50
)

var colorPattern = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

// Branding answers a tenant's branding, the defaults (its name as display name) when never
// set. It returns apperr NotFound for a tenant the actor may not read.
func (s *Service) Branding(ctx context.Context, a actor.Actor, tenantID string) (*Branding, error) {
	t, err := s.Get(ctx, a, tenantID)
	if err != nil {
		return nil, err
	}
	b, err := s.store.Branding(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = &Branding{DisplayName: t.Name, EmbedAllowedHosts: []string{}}
	}
	return b, nil
}

// PutBranding validates and replaces a tenant's branding. It returns apperr NotFound or
// Forbidden as Update does, and Invalid (changing nothing) naming every bad field.
func (s *Service) PutBranding(ctx context.Context, a actor.Actor, tenantID string, b Branding) (*Branding, error) {
	if err := s.authorizeManage(a, tenantID); err != nil {
		return nil, err
	}
	if err := validateBranding(&b); err != nil {
		return nil, err
	}
	t, err := s.store.Get(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	if err := s.store.PutBranding(ctx, t, &b, Change{Fields: []string{"branding"}, By: a.UserID, At: s.now()}); err != nil {
		return nil, err
	}
	return &b, nil
}

func validateBranding(b *Branding) error {
	var c check.Checker
	texts := []struct {
		name string
		v    *string
		max  int
	}{
		{"display_name", &b.DisplayName, 200}, {"font_family", &b.FontFamily, 200},
		{"email_from_name", &b.EmailFromName, 200}, {"watermark_text", &b.WatermarkText, 200},
		{"email_footer_html", &b.EmailFooterHTML, maxFooterHTML},
	}
	for _, f := range texts {
		*f.v = strings.TrimSpace(*f.v)
		c.AddIf(utf8.RuneCountInString(*f.v) > f.max, f.name, "is too long")
	}
	colors := []struct {
		name string
		v    *string
	}{
		{"primary_color", &b.PrimaryColor}, {"secondary_color", &b.SecondaryColor},
		{"accent_color", &b.AccentColor}, {"background_color", &b.BackgroundColor},
	}
	for _, f := range colors {
		*f.v = strings.TrimSpace(*f.v)
		c.AddIf(*f.v != "" && !colorPattern.MatchString(*f.v), f.name, "must be a color like #1A2B3C")
	}
	urls := []struct {
		name string
		v    *string
	}{
		{"logo_url", &b.LogoURL}, {"logo_dark_url", &b.LogoDarkURL}, {"favicon_url", &b.FaviconURL},
		{"og_image_url", &b.OGImageURL}, {"support_url", &b.SupportURL}, {"terms_url", &b.TermsURL},
		{"privacy_url", &b.PrivacyURL}, {"watermark_image_url", &b.WatermarkImageURL},
	}
	for _, f := range urls {
		*f.v = strings.TrimSpace(*f.v)
		if *f.v != "" {
			if err := validHTTPS(*f.v); err != "" {
				c.Add(f.name, err)
			}
		}
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"email_from_address", &b.EmailFromAddress}, {"email_reply_to", &b.EmailReplyTo}} {
		*f.v = strings.TrimSpace(*f.v)
		c.AddIf(*f.v != "" && !emailrule.Valid(*f.v), f.name, emailrule.Message)
	}
	c.AddIf(len(b.EmbedAllowedHosts) > maxEmbedHosts, "embed_allowed_hosts", "must have at most 50 hosts")
	hosts := make([]string, 0, len(b.EmbedAllowedHosts))
	for _, h := range b.EmbedAllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if !validHost(strings.TrimPrefix(h, "*.")) {
			c.Add("embed_allowed_hosts", "each must be a host name like app.example.com or *.example.com")
			break
		}
		hosts = append(hosts, h)
	}
	b.EmbedAllowedHosts = hosts
	return c.Reject("validation_failed", "the branding is invalid")
}

// validHTTPS returns why raw is not an acceptable https URL, or "".
func validHTTPS(raw string) string {
	if len(raw) > 2048 {
		return "must be at most 2048 characters"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return "must be an absolute https URL without credentials"
	}
	return ""
}

var hostLabel = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`)

// validHost accepts a DNS name of at least two labels that is not an IP address.
func validHost(h string) bool {
	if len(h) > 253 || net.ParseIP(h) != nil {
		return false
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !hostLabel.MatchString(l) {
			return false
		}
	}
	return true
}
