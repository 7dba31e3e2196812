// Package wire holds the schemas that several tags of the identity API answer with (User,
// Tenant, Problem, PaginationMeta), generated once from api/openapi.yaml, and their one mapping
// from the domain: the login answer's user and GET /v1/users/me are the same object.
package wire

import (
	"time"

	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
)

// ToUser maps a user to the wire; now decides whether a ban is still running.
func ToUser(u *account.User, now time.Time) User {
	p := u.Profile
	banned := u.Banned(now)
	out := User{
		Id:                       uuid.MustParse(u.ID),
		TenantId:                 uuid.MustParse(u.TenantID),
		Email:                    u.Email,
		EmailVerified:            u.EmailVerified,
		PhoneNumber:              u.Phone,
		PhoneVerified:            u.PhoneVerified,
		FullName:                 u.FullName,
		AvatarUrl:                u.AvatarURL,
		IsAdmin:                  u.IsAdmin,
		IsTenantAdmin:            u.IsTenantAdmin,
		RegisterMode:             u.RegisterMode,
		LastActiveDate:           u.LastActive,
		RegisterDate:             u.RegisteredAt,
		BalanceMinor:             u.BalanceMinor,
		AffiliateBalanceMinor:    u.AffiliateBalanceMinor,
		LoyaltyScore:             u.LoyaltyScore,
		DailyRemainRenderCount:   u.DailyRemainRenderCount,
		MaxDailyRenderCount:      u.MaxDailyRenderCount,
		ParallelRenderingCeiling: u.ParallelRenderingCeiling,
		UsedStorageBytes:         u.UsedStorageBytes,
		Slogan:                   p.Slogan,
		AboutMe:                  p.AboutMe,
		CompanyName:              p.CompanyName,
		WebsiteName:              p.WebsiteName,
		Gender:                   (*UserGender)(p.Gender),
		EmailTellMe:              &p.EmailTellMe,
		SmsTellMe:                &p.SMSTellMe,
		PushTellMe:               &p.PushTellMe,
		TelegramTellMe:           &p.TelegramTellMe,
		IsBanned:                 &banned,
	}
	if p.BirthDate != nil {
		out.BirthDate = &openapi_types.Date{Time: *p.BirthDate}
	}
	if banned {
		out.BannedUntil = u.BannedUntil
	}
	return out
}

// ToTenant maps a tenant to the wire.
func ToTenant(t *tenant.Tenant) Tenant {
	origins := t.AllowedOrigins
	if origins == nil {
		origins = []string{}
	}
	return Tenant{
		Id: uuid.MustParse(t.ID), Slug: t.Slug, Name: t.Name, Kind: TenantKind(t.Kind), Status: TenantStatus(t.Status),
		CustomDomain: t.CustomDomain, DomainVerified: t.DomainVerified, ContactEmail: t.ContactEmail,
		ContactName: &t.ContactName, ContactPhone: &t.ContactPhone, BillingEmail: &t.BillingEmail,
		AllowedOrigins: &origins, MaxUsers: t.MaxUsers, MaxStorageGb: t.MaxStorageGB,
		MonthlyRenderQty: t.MonthlyRenderQty, TrialEndsAt: t.TrialEndsAt, CreatedAt: t.CreatedAt,
	}
}

// ToMeta maps the answered page's description to the pagination block.
func ToMeta(m paging.Meta) PaginationMeta {
	return PaginationMeta{Page: m.Page, PageSize: m.PageSize, Total: m.Total, HasMore: m.HasMore}
}
