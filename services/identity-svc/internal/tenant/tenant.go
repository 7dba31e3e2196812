// Package tenant holds the rules for managing tenants: creation, settings, branding, custom
// domain verification and usage. Who may act is decided here from the actor: platform admins
// act on every tenant, tenant admins manage their own, users read their own, services read all.
// A tenant the actor may not read is reported as apperr NotFound, so that its existence is not
// revealed; a tenant the actor may read but not manage is apperr Forbidden.
package tenant

import (
	"context"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	emailrule "github.com/motionstudio/platform/pkg/email"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// Tenant kinds and statuses.
const (
	KindInternal   = "Internal"
	KindReseller   = "Reseller"
	KindEnterprise = "Enterprise"

	StatusActive    = "Active"
	StatusTrial     = "Trial"
	StatusSuspended = "Suspended"
	StatusCancelled = "Cancelled"
)

// Tenant is an isolated customer of the platform with its settings.
type Tenant struct {
	ID               string
	Slug             string
	Name             string
	Kind             string
	Status           string
	CustomDomain     *string
	DomainVerified   bool
	ContactEmail     string
	ContactName      string
	ContactPhone     string
	BillingEmail     string
	AllowedOrigins   []string
	MaxUsers         *int
	MaxStorageGB     *int
	MonthlyRenderQty *int
	TrialEndsAt      *time.Time
	CreatedAt        time.Time
	// TokensNotBefore is set when the tenant is suspended or cancelled: its sessions issued
	// before it are refused, also after a reactivation.
	TokensNotBefore *time.Time
}

// Open reports whether the tenant accepts registrations and logins (Active or Trial).
func (t *Tenant) Open() bool { return t.Status == StatusActive || t.Status == StatusTrial }

// New is the input of Create.
type New struct {
	Slug, Name, ContactEmail, ContactName, ContactPhone, Kind string
}

// Update changes the fields that are not nil. Status is for platform admins only (SetStatus).
type Update struct {
	Name, ContactName, ContactEmail, ContactPhone, BillingEmail *string
	AllowedOrigins                                              *[]string
	Status                                                      *string
}

// Query selects a page of tenants.
type Query struct {
	Q              string
	Page, PageSize int
}

// Page is one page of tenants.
type Page struct {
	Tenants        []*Tenant
	Total          int64
	Page, PageSize int
}

// Change is a settings change with the names of the changed fields, for the event.
type Change struct {
	Fields []string
	By     string
	At     time.Time
}

// Store persists tenants. Lookups return apperr NotFound; Create returns apperr Conflict for
// a taken slug.
type Store interface {
	Create(ctx context.Context, t *Tenant) error
	Get(ctx context.Context, id string) (*Tenant, error)
	BySlug(ctx context.Context, slug string) (*Tenant, error)
	// ByVerifiedDomain finds the tenant whose verified custom domain is domain.
	ByVerifiedDomain(ctx context.Context, domain string) (*Tenant, error)
	List(ctx context.Context, q Query) (Page, error)
	// Update locks the tenant, applies fn and, when fn reports changed fields, saves the tenant
	// and records the change event in one transaction.
	Update(ctx context.Context, id string, fn func(*Tenant) (Change, error)) (*Tenant, error)
	// SetStatus locks the tenant, applies fn and, when fn answers a change, saves the status
	// and TokensNotBefore, records the change in the audit trail and writes the
	// tenant.status_changed event in one transaction.
	SetStatus(ctx context.Context, id string, fn func(*Tenant) (*StatusChange, error)) (*Tenant, error)
	BrandingStore
	DomainStore
	UsageStore
}

// Service implements the tenant operations.
type Service struct {
	store     Store
	checker   Checker
	now       func() time.Time
	newID     func() string
	newTok    func() string
	ttl       time.Duration
	tokenLife time.Duration
	hooks     []StatusHook
}

// Options configure a Service.
type Options struct {
	Now   func() time.Time
	NewID func() string
	// NewToken returns a fresh 32-character challenge token.
	NewToken func() string
	// ChallengeTTL is how long a domain challenge stays valid.
	ChallengeTTL time.Duration
	// TokenLife is how long an access token may be presented after it is issued: its lifetime
	// plus the verifiers' clock leeway. A suspension refuses the tenant's tokens that long.
	TokenLife time.Duration
	// Hooks learn of every status a platform admin sets, after it is stored.
	Hooks []StatusHook
}

// NewService returns a Service.
func NewService(store Store, checker Checker, o Options) *Service {
	return &Service{store: store, checker: checker, now: o.Now, newID: o.NewID, newTok: o.NewToken,
		ttl: o.ChallengeTTL, tokenLife: o.TokenLife, hooks: o.Hooks}
}

var slugPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`)

// Create validates and stores a new Active tenant. Platform admins and service clients (the
// signup flow) may create tenants. It returns apperr Forbidden for anyone else, Invalid for bad
// input and Conflict for a taken slug.
func (s *Service) Create(ctx context.Context, a actor.Actor, in New) (*Tenant, error) {
	if !a.PlatformAdmin && !a.Service {
		return nil, apperr.E(apperr.Forbidden, "admin_required", "a platform administrator or the signup service is required")
	}
	in.Slug = strings.ToLower(strings.TrimSpace(in.Slug))
	in.Name = strings.TrimSpace(in.Name)
	var c check.Checker
	c.AddIf(!slugPattern.MatchString(in.Slug), "slug", "must be 1-63 lower-case letters, digits or hyphens, not starting or ending with a hyphen")
	c.AddIf(in.Name == "" || utf8.RuneCountInString(in.Name) > 200, "name", "is required and at most 200 characters")
	c.AddIf(!emailrule.Valid(in.ContactEmail), "contact_email", emailrule.Message)
	if in.Kind == "" {
		in.Kind = KindReseller
	}
	c.AddIf(in.Kind != KindReseller && in.Kind != KindEnterprise, "kind", "must be Reseller or Enterprise")
	c.Text("contact_name", &in.ContactName, check.NameMax)
	c.Text("contact_phone", &in.ContactPhone, check.NameMax)
	if err := c.Reject("validation_failed", "the tenant is invalid"); err != nil {
		return nil, err
	}
	t := &Tenant{
		ID: s.newID(), Slug: in.Slug, Name: in.Name, Kind: in.Kind, Status: StatusActive,
		ContactEmail: strings.TrimSpace(in.ContactEmail), ContactName: strings.TrimSpace(in.ContactName),
		ContactPhone: strings.TrimSpace(in.ContactPhone), AllowedOrigins: []string{}, CreatedAt: s.now(),
	}
	if err := s.store.Create(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

// List answers a page of tenants to a platform admin; apperr Forbidden for anyone else and
// Invalid for a bad page.
func (s *Service) List(ctx context.Context, a actor.Actor, q Query) (Page, error) {
	if !a.PlatformAdmin {
		return Page{}, apperr.E(apperr.Forbidden, "admin_required", "a platform administrator is required")
	}
	p, err := paging.Ints(q.Page, q.PageSize)
	if err != nil {
		return Page{}, err
	}
	q.Page, q.PageSize = p.Number, p.Size
	q.Q = strings.ToLower(strings.TrimSpace(q.Q))
	out, err := s.store.List(ctx, q)
	if err != nil {
		return Page{}, err
	}
	out.Page, out.PageSize = p.Number, p.Size
	return out, nil
}

// Get answers a tenant the actor may read; apperr NotFound otherwise.
func (s *Service) Get(ctx context.Context, a actor.Actor, id string) (*Tenant, error) {
	if !a.CanRead(id) {
		return nil, notFound()
	}
	return s.store.Get(ctx, id)
}

// Resolve finds a tenant by slug or, for a value with a dot, by verified custom domain. It
// returns apperr NotFound when there is none or the actor may not read it.
func (s *Service) Resolve(ctx context.Context, a actor.Actor, slugOrDomain string) (*Tenant, error) {
	v := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(slugOrDomain), "."))
	var (
		t   *Tenant
		err error
	)
	if strings.Contains(v, ".") {
		t, err = s.store.ByVerifiedDomain(ctx, v)
	} else {
		t, err = s.store.BySlug(ctx, v)
	}
	if err != nil {
		return nil, err
	}
	if !a.CanRead(t.ID) {
		return nil, notFound()
	}
	return t, nil
}

// Update changes a tenant's settings and records tenant.updated with the changed fields, and
// its status as SetStatus does when Status is set. It returns apperr NotFound for a tenant the
// actor may not read, Forbidden for one it may read but not manage and for a Status from
// anyone but a platform admin, Invalid (changing nothing) for bad fields, and SetStatus's
// Conflict (changing nothing) for a refused transition.
func (s *Service) Update(ctx context.Context, a actor.Actor, id string, in Update) (*Tenant, error) {
	if err := s.authorizeManage(a, id); err != nil {
		return nil, err
	}
	if in.Status != nil && !a.PlatformAdmin {
		return nil, statusRequiresAdmin()
	}
	if err := validateUpdate(&in); err != nil {
		return nil, err
	}
	if in.Status != nil {
		if _, err := s.SetStatus(ctx, a, id, *in.Status); err != nil {
			return nil, err
		}
	}
	return s.store.Update(ctx, id, func(t *Tenant) (Change, error) {
		var changed []string
		set := func(name string, dst *string, v *string) {
			if v != nil && *dst != *v {
				*dst = *v
				changed = append(changed, name)
			}
		}
		set("name", &t.Name, in.Name)
		set("contact_name", &t.ContactName, in.ContactName)
		set("contact_email", &t.ContactEmail, in.ContactEmail)
		set("contact_phone", &t.ContactPhone, in.ContactPhone)
		set("billing_email", &t.BillingEmail, in.BillingEmail)
		if in.AllowedOrigins != nil && !slices.Equal(t.AllowedOrigins, *in.AllowedOrigins) {
			t.AllowedOrigins = *in.AllowedOrigins
			changed = append(changed, "allowed_origins")
		}
		return Change{Fields: changed, By: a.UserID, At: s.now()}, nil
	})
}

func validateUpdate(in *Update) error {
	trim := func(p *string) {
		if p != nil {
			*p = strings.TrimSpace(*p)
		}
	}
	for _, p := range []*string{in.Name, in.ContactName, in.ContactEmail, in.ContactPhone, in.BillingEmail} {
		trim(p)
	}
	var c check.Checker
	c.AddIf(in.Name != nil && (*in.Name == "" || utf8.RuneCountInString(*in.Name) > 200), "name", "must be 1-200 characters")
	c.AddIf(in.ContactEmail != nil && !emailrule.Valid(*in.ContactEmail), "contact_email", emailrule.Message)
	c.AddIf(in.BillingEmail != nil && *in.BillingEmail != "" && !emailrule.Valid(*in.BillingEmail), "billing_email", "must be an email address or empty")
	c.Text("contact_name", in.ContactName, check.NameMax)
	c.Text("contact_phone", in.ContactPhone, check.NameMax)
	c.AddIf(in.Status != nil && !validStatus(*in.Status), "status", statusMessage)
	if in.AllowedOrigins != nil {
		origins := *in.AllowedOrigins
		c.AddIf(len(origins) > 50, "allowed_origins", "must have at most 50 origins")
		clean := make([]string, 0, len(origins))
		for _, o := range origins {
			n, ok := normalizeOrigin(o)
			if !ok {
				c.Add("allowed_origins", "each must be an origin like https://app.example.com")
				break
			}
			if !slices.Contains(clean, n) {
				clean = append(clean, n)
			}
		}
		*in.AllowedOrigins = clean
	}
	return c.Reject("validation_failed", "the tenant update is invalid")
}

// normalizeOrigin accepts scheme://host[:port] with http(s) and nothing after it.
func normalizeOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// authorizeManage returns NotFound when the actor may not read the tenant and Forbidden when
// it may read but not manage it.
func (s *Service) authorizeManage(a actor.Actor, tenantID string) error {
	if a.CanManage(tenantID) {
		return nil
	}
	if a.CanRead(tenantID) {
		return apperr.E(apperr.Forbidden, "tenant_admin_required", "a tenant administrator is required")
	}
	return notFound()
}

func notFound() error { return apperr.E(apperr.NotFound, "not_found", "tenant not found") }
