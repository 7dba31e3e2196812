package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
)

// Tenants implements tenant.Store.
type Tenants struct {
	db      *gorm.DB
	outbox  *outbox.Writer
	changes AccountChanges
}

// NewTenants returns a Tenants store writing its events through w and telling changes (nil: no
// one) of the tenants it updates.
func NewTenants(db *gorm.DB, w *outbox.Writer, changes AccountChanges) *Tenants {
	return &Tenants{db: db, outbox: w, changes: heard(changes)}
}

// jsonList is a string list kept in a jsonb column.
type jsonList []string

// Value encodes the list as JSON.
func (l jsonList) Value() (driver.Value, error) {
	if l == nil {
		l = jsonList{}
	}
	b, err := json.Marshal([]string(l))
	return string(b), err
}

// Scan decodes a JSON list.
func (l *jsonList) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case []byte:
		b = v
	case string:
		b = []byte(v)
	case nil:
		*l = jsonList{}
		return nil
	default:
		return fmt.Errorf("store: scan %T into a string list", src)
	}
	return json.Unmarshal(b, (*[]string)(l))
}

type tenantRow struct {
	ID               string `gorm:"primaryKey"`
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
	AllowedOrigins   jsonList `gorm:"type:jsonb"`
	MaxUsers         *int
	MaxStorageGb     *int
	MonthlyRenderQty *int
	TrialEndsAt      *time.Time
	CreatedAt        time.Time
	TokensNotBefore  *time.Time
}

func (tenantRow) TableName() string { return "tenants" }

func toTenantRow(t *tenant.Tenant) tenantRow {
	return tenantRow{
		ID: t.ID, Slug: t.Slug, Name: t.Name, Kind: t.Kind, Status: t.Status, CustomDomain: t.CustomDomain,
		DomainVerified: t.DomainVerified, ContactEmail: t.ContactEmail, ContactName: t.ContactName,
		ContactPhone: t.ContactPhone, BillingEmail: t.BillingEmail, AllowedOrigins: jsonList(t.AllowedOrigins),
		MaxUsers: t.MaxUsers, MaxStorageGb: t.MaxStorageGB, MonthlyRenderQty: t.MonthlyRenderQty,
		TrialEndsAt: t.TrialEndsAt, CreatedAt: t.CreatedAt, TokensNotBefore: t.TokensNotBefore,
	}
}

func (m tenantRow) toDomain() *tenant.Tenant {
	origins := []string(m.AllowedOrigins)
	if origins == nil {
		origins = []string{}
	}
	return &tenant.Tenant{
		ID: m.ID, Slug: m.Slug, Name: m.Name, Kind: m.Kind, Status: m.Status, CustomDomain: m.CustomDomain,
		DomainVerified: m.DomainVerified, ContactEmail: m.ContactEmail, ContactName: m.ContactName,
		ContactPhone: m.ContactPhone, BillingEmail: m.BillingEmail, AllowedOrigins: origins,
		MaxUsers: m.MaxUsers, MaxStorageGB: m.MaxStorageGb, MonthlyRenderQty: m.MonthlyRenderQty,
		TrialEndsAt: m.TrialEndsAt, CreatedAt: m.CreatedAt, TokensNotBefore: m.TokensNotBefore,
	}
}

// Create inserts t; apperr Conflict when the slug is taken.
func (s *Tenants) Create(ctx context.Context, t *tenant.Tenant) error {
	m := toTenantRow(t)
	return pgdb.Translate(s.db.WithContext(ctx).Create(&m).Error, "tenant")
}

func (s *Tenants) take(ctx context.Context, query string, args ...any) (*tenant.Tenant, error) {
	var m tenantRow
	if err := s.db.WithContext(ctx).Where(query, args...).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "tenant")
	}
	return m.toDomain(), nil
}

// Get finds a tenant by id; apperr NotFound when there is none.
func (s *Tenants) Get(ctx context.Context, id string) (*tenant.Tenant, error) {
	return s.take(ctx, "id = ?", id)
}

// BySlug finds a tenant by slug; apperr NotFound when there is none.
func (s *Tenants) BySlug(ctx context.Context, slug string) (*tenant.Tenant, error) {
	return s.take(ctx, "slug = ?", slug)
}

// IDBySlug finds the id of the tenant with that slug; apperr NotFound when there is none.
func (s *Tenants) IDBySlug(ctx context.Context, slug string) (string, error) {
	t, err := s.BySlug(ctx, slug)
	if err != nil {
		return "", err
	}
	return t.ID, nil
}

// ByVerifiedDomain finds the tenant with that verified custom domain; apperr NotFound when
// there is none.
func (s *Tenants) ByVerifiedDomain(ctx context.Context, domain string) (*tenant.Tenant, error) {
	return s.take(ctx, "lower(custom_domain) = ? AND domain_verified", domain)
}

// List answers a page of tenants newest first.
func (s *Tenants) List(ctx context.Context, q tenant.Query) (tenant.Page, error) {
	query := s.db.WithContext(ctx).Model(&tenantRow{})
	if q.Q != "" {
		like := "%" + escapeLike(q.Q) + "%"
		query = query.Where("slug LIKE ? OR lower(name) LIKE ?", like, like)
	}
	var total int64
	if err := query.Count(&total).Error; err != nil {
		return tenant.Page{}, pgdb.Translate(err, "tenants")
	}
	var rows []tenantRow
	if err := query.Order("created_at DESC, id DESC").Limit(q.PageSize).Offset((q.Page - 1) * q.PageSize).Find(&rows).Error; err != nil {
		return tenant.Page{}, pgdb.Translate(err, "tenants")
	}
	page := tenant.Page{Total: total, Tenants: make([]*tenant.Tenant, len(rows))}
	for i, r := range rows {
		page.Tenants[i] = r.toDomain()
	}
	return page, nil
}

// Update locks the tenant, applies fn and, when fields changed, saves it and records
// identity.tenant.updated.v1 in one transaction. It returns apperr NotFound for an unknown
// tenant and fn's error unchanged.
func (s *Tenants) Update(ctx context.Context, id string, fn func(*tenant.Tenant) (tenant.Change, error)) (*tenant.Tenant, error) {
	var out *tenant.Tenant
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		t, err := lockTenant(tx, id)
		if err != nil {
			return err
		}
		change, err := fn(t)
		if err != nil {
			return err
		}
		out = t
		if len(change.Fields) == 0 {
			return nil
		}
		saved := toTenantRow(t)
		if err := tx.Model(&saved).Select("*").Omit("id", "created_at").Updates(&saved).Error; err != nil {
			return pgdb.Translate(err, "tenant")
		}
		if err := tx.Exec("UPDATE tenants SET updated_at = ? WHERE id = ?", change.At, id).Error; err != nil {
			return pgdb.Translate(err, "tenant")
		}
		return s.tenantUpdated(ctx, tx, t, change)
	})
	s.changes.TenantChanged(id)
	return out, err
}

// lockTenant reads the tenant in tx and locks its row until tx ends; apperr NotFound when there
// is none.
func lockTenant(tx *gorm.DB, id string) (*tenant.Tenant, error) {
	var m tenantRow
	if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "tenant")
	}
	return m.toDomain(), nil
}

// statusChangeRow is one row of the status changes' audit trail.
type statusChangeRow struct {
	ID         string `gorm:"primaryKey"`
	TenantID   string
	FromStatus string
	ToStatus   string
	ChangedBy  string
	ChangedAt  time.Time
}

func (statusChangeRow) TableName() string { return "tenant_status_changes" }

// SetStatus locks the tenant, applies fn and, when fn answers a change, saves the status and
// tokens_not_before, adds the change to tenant_status_changes and records
// identity.tenant.status_changed.v1 in one transaction. It returns apperr NotFound for an
// unknown tenant and fn's error unchanged.
func (s *Tenants) SetStatus(ctx context.Context, id string, fn func(*tenant.Tenant) (*tenant.StatusChange, error)) (*tenant.Tenant, error) {
	var out *tenant.Tenant
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		t, err := lockTenant(tx, id)
		if err != nil {
			return err
		}
		c, err := fn(t)
		out = t
		if err != nil || c == nil {
			return err
		}
		if err := tx.Exec("UPDATE tenants SET status = ?, tokens_not_before = ?, updated_at = ? WHERE id = ?",
			t.Status, t.TokensNotBefore, c.At, id).Error; err != nil {
			return pgdb.Translate(err, "tenant")
		}
		audit := statusChangeRow{ID: uuid.Must(uuid.NewV7()).String(), TenantID: id, FromStatus: c.From, ToStatus: c.To, ChangedBy: c.By, ChangedAt: c.At}
		if err := tx.Create(&audit).Error; err != nil {
			return pgdb.Translate(err, "tenant status change")
		}
		ev := &identityv1.TenantStatusChanged{
			TenantId: id, Slug: t.Slug, FromStatus: c.From, ToStatus: c.To, ChangedBy: c.By, ChangedAt: timestamppb.New(c.At),
		}
		if c.TokensNotBefore != nil {
			ev.TokensNotBefore, ev.DenyUntil = timestamppb.New(*c.TokensNotBefore), timestamppb.New(*c.DenyUntil)
		}
		_, err = s.outbox.Add(ctx, tx, events.SubjectTenantStatusChanged, events.SubjectTenantStatusChanged, ev)
		return err
	})
	s.changes.TenantChanged(id)
	return out, err
}

func (s *Tenants) tenantUpdated(ctx context.Context, tx *gorm.DB, t *tenant.Tenant, c tenant.Change) error {
	_, err := s.outbox.Add(ctx, tx, events.SubjectTenantUpdated, events.SubjectTenantUpdated, &identityv1.TenantUpdated{
		TenantId: t.ID, Slug: t.Slug, Name: t.Name, Status: t.Status, ChangedFields: c.Fields,
		UpdatedBy: c.By, UpdatedAt: timestamppb.New(c.At),
	})
	return err
}

// brandingDoc is the stored JSON form of tenant.Branding.
type brandingDoc struct {
	DisplayName       string   `json:"display_name"`
	LogoURL           string   `json:"logo_url"`
	LogoDarkURL       string   `json:"logo_dark_url"`
	FaviconURL        string   `json:"favicon_url"`
	OGImageURL        string   `json:"og_image_url"`
	PrimaryColor      string   `json:"primary_color"`
	SecondaryColor    string   `json:"secondary_color"`
	AccentColor       string   `json:"accent_color"`
	BackgroundColor   string   `json:"background_color"`
	FontFamily        string   `json:"font_family"`
	EmailFromName     string   `json:"email_from_name"`
	EmailFromAddress  string   `json:"email_from_address"`
	EmailReplyTo      string   `json:"email_reply_to"`
	EmailFooterHTML   string   `json:"email_footer_html"`
	SupportURL        string   `json:"support_url"`
	TermsURL          string   `json:"terms_url"`
	PrivacyURL        string   `json:"privacy_url"`
	WatermarkText     string   `json:"watermark_text"`
	WatermarkImageURL string   `json:"watermark_image_url"`
	EmbedEnabled      bool     `json:"embed_enabled"`
	WatermarkEnabled  bool     `json:"watermark_enabled"`
	EmbedAllowedHosts []string `json:"embed_allowed_hosts"`
}

// Branding returns the stored branding, or (nil, nil) when none was stored.
func (s *Tenants) Branding(ctx context.Context, tenantID string) (*tenant.Branding, error) {
	var raw []string
	if err := s.db.WithContext(ctx).Raw("SELECT branding::text FROM tenant_branding WHERE tenant_id = ?", tenantID).Scan(&raw).Error; err != nil {
		return nil, pgdb.Translate(err, "branding")
	}
	if len(raw) == 0 {
		return nil, nil
	}
	var d brandingDoc
	if err := json.Unmarshal([]byte(raw[0]), &d); err != nil {
		return nil, fmt.Errorf("store: decode branding of %s: %w", tenantID, err)
	}
	b := tenant.Branding(d)
	if b.EmbedAllowedHosts == nil {
		b.EmbedAllowedHosts = []string{}
	}
	return &b, nil
}

// PutBranding stores b and records identity.tenant.updated.v1 in one transaction.
func (s *Tenants) PutBranding(ctx context.Context, t *tenant.Tenant, b *tenant.Branding, c tenant.Change) error {
	doc, err := json.Marshal(brandingDoc(*b))
	if err != nil {
		return fmt.Errorf("store: encode branding of %s: %w", t.ID, err)
	}
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		err := tx.Exec(`INSERT INTO tenant_branding (tenant_id, branding, updated_at) VALUES (?, ?::jsonb, ?)
			ON CONFLICT (tenant_id) DO UPDATE SET branding = EXCLUDED.branding, updated_at = EXCLUDED.updated_at`,
			t.ID, string(doc), c.At).Error
		if err != nil {
			return pgdb.Translate(err, "branding")
		}
		return s.tenantUpdated(ctx, tx, t, c)
	})
}

type challengeRow struct {
	ID            string `gorm:"primaryKey"`
	TenantID      string
	Domain        string
	Method        string
	Token         string
	Status        string
	ExpiresAt     time.Time
	VerifiedAt    *time.Time
	LastCheckedAt *time.Time
	CreatedAt     time.Time
}

func (challengeRow) TableName() string { return "tenant_domain_verifications" }

func (m challengeRow) toDomain() *tenant.Challenge {
	c := tenant.Challenge(m)
	return &c
}

// LatestChallenge returns the newest unexpired challenge for the domain and method, or nil.
func (s *Tenants) LatestChallenge(ctx context.Context, tenantID, domain, method string, now time.Time) (*tenant.Challenge, error) {
	var m challengeRow
	err := s.db.WithContext(ctx).
		Where("tenant_id = ? AND domain = ? AND method = ? AND (status = ? OR expires_at > ?)", tenantID, domain, method, tenant.ChallengeVerified, now).
		Order("created_at DESC").Take(&m).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, pgdb.Translate(err, "domain verification")
	}
	return m.toDomain(), nil
}

// CreateChallenge inserts c.
func (s *Tenants) CreateChallenge(ctx context.Context, c *tenant.Challenge) error {
	m := challengeRow(*c)
	return pgdb.Translate(s.db.WithContext(ctx).Create(&m).Error, "domain verification")
}

// PendingChallenges returns unexpired pending challenges, least recently checked first.
func (s *Tenants) PendingChallenges(ctx context.Context, now time.Time, limit int) ([]*tenant.Challenge, error) {
	var rows []challengeRow
	err := s.db.WithContext(ctx).Where("status = ? AND expires_at > ?", tenant.ChallengePending, now).
		Order("last_checked_at ASC NULLS FIRST").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "domain verifications")
	}
	out := make([]*tenant.Challenge, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// MarkChecked records an unsuccessful check.
func (s *Tenants) MarkChecked(ctx context.Context, id string, at time.Time) error {
	err := s.db.WithContext(ctx).Exec("UPDATE tenant_domain_verifications SET last_checked_at = ? WHERE id = ?", at, id).Error
	return pgdb.Translate(err, "domain verification")
}

// MarkVerified verifies the challenge, sets the tenant's custom domain and records
// identity.tenant.domain_verified.v1 in one transaction; apperr Conflict when another tenant
// holds the domain.
func (s *Tenants) MarkVerified(ctx context.Context, c *tenant.Challenge, at time.Time) error {
	defer s.changes.TenantChanged(c.TenantID)
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		res := tx.Exec(`UPDATE tenant_domain_verifications SET status = ?, verified_at = ?, last_checked_at = ?
			WHERE id = ? AND status = ?`, tenant.ChallengeVerified, at, at, c.ID, tenant.ChallengePending)
		if res.Error != nil {
			return pgdb.Translate(res.Error, "domain verification")
		}
		if res.RowsAffected == 0 {
			return nil
		}
		err := tx.Exec(`UPDATE tenants SET custom_domain = ?, domain_verified = true, updated_at = ? WHERE id = ?`,
			c.Domain, at, c.TenantID).Error
		if pgdb.IsUniqueViolation(err, "tenants_custom_domain_key") {
			return apperr.E(apperr.Conflict, "domain_taken", "another tenant has verified this domain")
		}
		if err != nil {
			return pgdb.Translate(err, "tenant")
		}
		_, err = s.outbox.Add(ctx, tx, events.SubjectTenantDomainVerified, events.SubjectTenantDomainVerified, &identityv1.TenantDomainVerified{
			TenantId: c.TenantID, VerificationId: c.ID, Domain: c.Domain, Method: c.Method, VerifiedAt: timestamppb.New(at),
		})
		return err
	})
}

type usageRow struct {
	UsageDate         time.Time
	RendersCompleted  int
	RenderSeconds     int64
	StorageBytes      int64
	ApiCalls          int64
	ActiveUsers       int
	AmountBilledMinor int64
	BillingCurrency   string
	BillingStatus     string
}

// Usage returns the recorded days between from and to inclusive, oldest first.
func (s *Tenants) Usage(ctx context.Context, tenantID string, from, to time.Time) ([]tenant.UsageDay, error) {
	var rows []usageRow
	err := s.db.WithContext(ctx).Table("tenant_usage_days").
		Where("tenant_id = ? AND usage_date BETWEEN ? AND ?", tenantID, from.Format(time.DateOnly), to.Format(time.DateOnly)).
		Order("usage_date").Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "usage")
	}
	out := make([]tenant.UsageDay, len(rows))
	for i, r := range rows {
		out[i] = tenant.UsageDay{
			Date: r.UsageDate, RendersCompleted: r.RendersCompleted, RenderSeconds: r.RenderSeconds,
			StorageBytes: r.StorageBytes, APICalls: r.ApiCalls, ActiveUsers: r.ActiveUsers,
			AmountBilledMinor: r.AmountBilledMinor, BillingCurrency: r.BillingCurrency, BillingStatus: r.BillingStatus,
		}
	}
	return out, nil
}

// lockTenantBelow locks the tenant's row in tx (apperr NotFound when there is none), then
// counts the rows of counted, a query on entity's table, and answers full when there are limit
// or more. Creations that must keep a tenant under a limit call it first in their transaction:
// they queue on the tenant's row, so the count each one sees is exact.
func lockTenantBelow(tx *gorm.DB, tenantID string, counted *gorm.DB, limit int, entity string, full error) error {
	var locked []string
	if err := tx.Raw("SELECT id FROM tenants WHERE id = ? FOR UPDATE", tenantID).Scan(&locked).Error; err != nil {
		return pgdb.Translate(err, "tenant")
	}
	if len(locked) == 0 {
		return apperr.E(apperr.NotFound, "not_found", "tenant not found")
	}
	var n int64
	if err := counted.Count(&n).Error; err != nil {
		return pgdb.Translate(err, entity)
	}
	if n >= int64(limit) {
		return full
	}
	return nil
}
