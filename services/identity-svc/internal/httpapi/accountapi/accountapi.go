// Package accountapi is identity-svc's HTTP adapter for users, tenants, API keys and webhooks
// (the operations tagged Users, Tenants, ApiKeys and Webhooks).
package accountapi

import (
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
)

// Deps are the domain services the handlers call.
type Deps struct {
	Users    Users
	Tenants  Tenants
	APIKeys  APIKeys
	Webhooks Webhooks
	// Currency is the ISO 4217 code of balances.
	Currency string
}

// Handler implements ServerInterface.
type Handler struct {
	users    Users
	tenants  Tenants
	apiKeys  APIKeys
	webhooks Webhooks
	currency string
}

// NewHandler returns a Handler.
func NewHandler(d Deps) *Handler {
	return &Handler{users: d.Users, tenants: d.Tenants, apiKeys: d.APIKeys, webhooks: d.Webhooks, currency: d.Currency}
}

// Policies says who may call each operation of this package. Admin operations admit every
// user token; the domain decides between platform admins, tenant admins and others, so that
// a tenant admin is confined to their own tenant.
func Policies(v *authn.Verifier) httpx.Policies {
	user := httpx.Allow(v.RequireUser())
	either := httpx.Allow(v.UserOrService())
	return httpx.Policies{
		"listTenants":           user,
		"createTenant":          either,
		"getTenantBySlug":       either,
		"getTenant":             either,
		"updateTenant":          user,
		"getTenantBranding":     either,
		"putTenantBranding":     user,
		"verifyTenantDomain":    user,
		"getTenantUsage":        either,
		"listApiKeys":           user,
		"createApiKey":          user,
		"revokeApiKey":          user,
		"validateApiKey":        httpx.Allow(v.RequireService()),
		"listWebhooks":          user,
		"createWebhook":         user,
		"deleteWebhook":         user,
		"listWebhookDeliveries": user,
		"getMe":                 user,
		"updateMe":              user,
		"getMyBalance":          user,
		"setMyAvatar":           user,
		"getUser":               user,
		"listUsers":             user,
		"banUser":               user,
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// pageParam maps an absent paging parameter to 0 (the default) and an explicit 0 to -1, so
// that the domain refuses it.
func pageParam(p *int) int {
	switch {
	case p == nil:
		return 0
	case *p == 0:
		return -1
	default:
		return *p
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
