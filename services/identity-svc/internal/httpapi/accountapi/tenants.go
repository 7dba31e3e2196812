package accountapi

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/wire"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
)

// Tenants is what the handlers need of the tenant service.
type Tenants interface {
	Create(ctx context.Context, a actor.Actor, in tenant.New) (*tenant.Tenant, error)
	List(ctx context.Context, a actor.Actor, q tenant.Query) (tenant.Page, error)
	Get(ctx context.Context, a actor.Actor, id string) (*tenant.Tenant, error)
	Resolve(ctx context.Context, a actor.Actor, slugOrDomain string) (*tenant.Tenant, error)
	Update(ctx context.Context, a actor.Actor, id string, in tenant.Update) (*tenant.Tenant, error)
	Branding(ctx context.Context, a actor.Actor, tenantID string) (*tenant.Branding, error)
	PutBranding(ctx context.Context, a actor.Actor, tenantID string, b tenant.Branding) (*tenant.Branding, error)
	VerifyDomain(ctx context.Context, a actor.Actor, tenantID, domain, method string) (*tenant.Challenge, error)
	Usage(ctx context.Context, a actor.Actor, tenantID string, from, to time.Time) ([]tenant.UsageDay, error)
}

// ListTenants answers a page of tenants to a platform admin.
func (h *Handler) ListTenants(c echo.Context, params ListTenantsParams) error {
	page, err := h.tenants.List(c.Request().Context(), caller.Of(c), tenant.Query{
		Q: deref(params.Q), Page: pageParam(params.Page), PageSize: pageParam(params.PageSize),
	})
	if err != nil {
		return err
	}
	out := TenantPage{Data: make([]Tenant, len(page.Tenants)), Meta: wire.ToMeta(paging.Page{Number: page.Page, Size: page.PageSize}.Meta(int(page.Total)))}
	for i, t := range page.Tenants {
		out.Data[i] = wire.ToTenant(t)
	}
	return c.JSON(http.StatusOK, out)
}

// CreateTenant creates a tenant.
func (h *Handler) CreateTenant(c echo.Context) error {
	var body TenantCreate
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	t, err := h.tenants.Create(c.Request().Context(), caller.Of(c), tenant.New{
		Slug: body.Slug, Name: body.Name, ContactEmail: body.ContactEmail, Kind: string(deref(body.Kind)),
		ContactName: deref(body.ContactName), ContactPhone: deref(body.ContactPhone),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, wire.ToTenant(t))
}

// GetTenantBySlug resolves a tenant by slug or verified custom domain.
func (h *Handler) GetTenantBySlug(c echo.Context, slug string) error {
	t, err := h.tenants.Resolve(c.Request().Context(), caller.Of(c), slug)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ToTenant(t))
}

// GetTenant answers one tenant.
func (h *Handler) GetTenant(c echo.Context, tenantID openapi_types.UUID) error {
	t, err := h.tenants.Get(c.Request().Context(), caller.Of(c), tenantID.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ToTenant(t))
}

// UpdateTenant changes a tenant's settings and, for a platform admin, its status.
func (h *Handler) UpdateTenant(c echo.Context, tenantID openapi_types.UUID) error {
	var body TenantUpdate
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	t, err := h.tenants.Update(c.Request().Context(), caller.Of(c), tenantID.String(), tenant.Update{
		Name: body.Name, ContactName: body.ContactName, ContactPhone: body.ContactPhone,
		ContactEmail: body.ContactEmail, BillingEmail: body.BillingEmail, AllowedOrigins: body.AllowedOrigins,
		Status: (*string)(body.Status),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ToTenant(t))
}

// GetTenantBranding answers a tenant's branding.
func (h *Handler) GetTenantBranding(c echo.Context, tenantID openapi_types.UUID) error {
	b, err := h.tenants.Branding(c.Request().Context(), caller.Of(c), tenantID.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toBrandingResponse(b))
}

// PutTenantBranding replaces a tenant's branding.
func (h *Handler) PutTenantBranding(c echo.Context, tenantID openapi_types.UUID) error {
	var body TenantBranding
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	b, err := h.tenants.PutBranding(c.Request().Context(), caller.Of(c), tenantID.String(), fromBranding(body))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toBrandingResponse(b))
}

// VerifyTenantDomain starts or checks a custom-domain verification.
func (h *Handler) VerifyTenantDomain(c echo.Context, tenantID openapi_types.UUID) error {
	var body DomainVerifyRequest
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	ch, err := h.tenants.VerifyDomain(c.Request().Context(), caller.Of(c), tenantID.String(), body.Domain, string(deref(body.Method)))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, DomainChallenge{
		VerificationId: uuid.MustParse(ch.ID), ChallengeRecord: ch.Record(), ExpiresAt: ch.ExpiresAt, Domain: ch.Domain,
		Method: DomainChallengeMethod(ch.Method), Status: DomainChallengeStatus(ch.Status),
		RecordName: ch.RecordName(), RecordValue: ch.Token,
	})
}

// GetTenantUsage answers a tenant's usage per day.
func (h *Handler) GetTenantUsage(c echo.Context, tenantID openapi_types.UUID, params GetTenantUsageParams) error {
	var from, to time.Time
	if params.From != nil {
		from = params.From.Time
	}
	if params.To != nil {
		to = params.To.Time
	}
	days, err := h.tenants.Usage(c.Request().Context(), caller.Of(c), tenantID.String(), from, to)
	if err != nil {
		return err
	}
	out := TenantUsageList{Data: make([]TenantUsageDay, len(days))}
	for i, d := range days {
		out.Data[i] = TenantUsageDay{
			UsageDate: openapi_types.Date{Time: d.Date}, RendersCompleted: d.RendersCompleted, RenderSeconds: d.RenderSeconds,
			StorageBytes: d.StorageBytes, ApiCalls: d.APICalls, ActiveUsers: d.ActiveUsers,
			AmountBilledMinor: d.AmountBilledMinor, BillingCurrency: d.BillingCurrency, BillingStatus: d.BillingStatus,
		}
	}
	return c.JSON(http.StatusOK, out)
}

func toBrandingResponse(b *tenant.Branding) TenantBranding {
	hosts := b.EmbedAllowedHosts
	return TenantBranding{
		DisplayName: &b.DisplayName, LogoUrl: &b.LogoURL, LogoDarkUrl: &b.LogoDarkURL, FaviconUrl: &b.FaviconURL,
		OgImageUrl: &b.OGImageURL, PrimaryColor: &b.PrimaryColor, SecondaryColor: &b.SecondaryColor,
		AccentColor: &b.AccentColor, BackgroundColor: &b.BackgroundColor, FontFamily: &b.FontFamily,
		EmailFromName: &b.EmailFromName, EmailFromAddress: &b.EmailFromAddress, EmailReplyTo: &b.EmailReplyTo,
		EmailFooterHtml: &b.EmailFooterHTML, SupportUrl: &b.SupportURL, TermsUrl: &b.TermsURL, PrivacyUrl: &b.PrivacyURL,
		WatermarkText: &b.WatermarkText, WatermarkImageUrl: &b.WatermarkImageURL, EmbedEnabled: &b.EmbedEnabled,
		WatermarkEnabled: &b.WatermarkEnabled, EmbedAllowedHosts: &hosts,
	}
}

func fromBranding(b TenantBranding) tenant.Branding {
	return tenant.Branding{
		DisplayName: deref(b.DisplayName), LogoURL: deref(b.LogoUrl), LogoDarkURL: deref(b.LogoDarkUrl),
		FaviconURL: deref(b.FaviconUrl), OGImageURL: deref(b.OgImageUrl), PrimaryColor: deref(b.PrimaryColor),
		SecondaryColor: deref(b.SecondaryColor), AccentColor: deref(b.AccentColor), BackgroundColor: deref(b.BackgroundColor),
		FontFamily: deref(b.FontFamily), EmailFromName: deref(b.EmailFromName), EmailFromAddress: deref(b.EmailFromAddress),
		EmailReplyTo: deref(b.EmailReplyTo), EmailFooterHTML: deref(b.EmailFooterHtml), SupportURL: deref(b.SupportUrl),
		TermsURL: deref(b.TermsUrl), PrivacyURL: deref(b.PrivacyUrl), WatermarkText: deref(b.WatermarkText),
		WatermarkImageURL: deref(b.WatermarkImageUrl), EmbedEnabled: deref(b.EmbedEnabled),
		WatermarkEnabled: deref(b.WatermarkEnabled), EmbedAllowedHosts: deref(b.EmbedAllowedHosts),
	}
}
