package accountapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
	"github.com/motionstudio/platform/services/identity-svc/internal/apikey"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/caller"
)

// APIKeys is what the handlers need of the API key service.
type APIKeys interface {
	Create(ctx context.Context, a actor.Actor, tenantID string, in apikey.New) (*apikey.Key, string, error)
	List(ctx context.Context, a actor.Actor, tenantID string) ([]*apikey.Key, error)
	Revoke(ctx context.Context, a actor.Actor, tenantID, keyID, reason string) error
	Validate(ctx context.Context, a actor.Actor, prefix, hash, ip string) (apikey.Validation, error)
}

// ListApiKeys answers a tenant's keys.
func (h *Handler) ListApiKeys(c echo.Context, tenantID openapi_types.UUID) error {
	keys, err := h.apiKeys.List(c.Request().Context(), caller.Of(c), tenantID.String())
	if err != nil {
		return err
	}
	out := ApiKeyList{Data: make([]ApiKey, len(keys))}
	for i, k := range keys {
		out.Data[i] = toAPIKeyResponse(k)
	}
	return c.JSON(http.StatusOK, out)
}

// CreateApiKey creates a key and answers its secret once.
func (h *Handler) CreateApiKey(c echo.Context, tenantID openapi_types.UUID) error {
	var body ApiKeyCreate
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	in := apikey.New{
		Name: body.Name, Environment: string(deref(body.Environment)), AllowedIPs: deref(body.AllowedIps),
		RateLimitRPM: body.RateLimitRpm, ExpiresAt: body.ExpiresAt, Scopes: make([]string, len(body.Scopes)),
	}
	for i, s := range body.Scopes {
		in.Scopes[i] = string(s)
	}
	k, secret, err := h.apiKeys.Create(c.Request().Context(), caller.Of(c), tenantID.String(), in)
	if err != nil {
		return err
	}
	r := toAPIKeyResponse(k)
	return c.JSON(http.StatusCreated, ApiKeyCreated{
		Id: r.Id, TenantId: r.TenantId, Name: r.Name, Environment: ApiKeyCreatedEnvironment(r.Environment),
		KeyPrefix: r.KeyPrefix, Last4: r.Last4, Scopes: r.Scopes, AllowedIps: r.AllowedIps, RateLimitRpm: r.RateLimitRpm,
		IsActive: r.IsActive, ExpiresAt: r.ExpiresAt, LastUsedAt: r.LastUsedAt, UsageCount: r.UsageCount,
		CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt, SecretKey: secret,
	})
}

// RevokeApiKey revokes a key; the body with a reason is optional.
func (h *Handler) RevokeApiKey(c echo.Context, tenantID, keyID openapi_types.UUID) error {
	var body ApiKeyRevoke
	if err := httpx.BindOptional(c, &body); err != nil {
		return err
	}
	if err := h.apiKeys.Revoke(c.Request().Context(), caller.Of(c), tenantID.String(), keyID.String(), deref(body.Reason)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ValidateApiKey answers the gateway whether a key may be used.
func (h *Handler) ValidateApiKey(c echo.Context) error {
	var body ApiKeyValidateRequest
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	v, err := h.apiKeys.Validate(c.Request().Context(), caller.Of(c), body.KeyPrefix, body.KeyHash, deref(body.IpAddress))
	if err != nil {
		return err
	}
	out := ApiKeyValidation{Valid: v.Valid, Scopes: []string{}}
	if !v.Valid {
		reason := ApiKeyValidationReason(v.Reason)
		out.Reason = &reason
		return c.JSON(http.StatusOK, out)
	}
	tid, kid, env := uuid.MustParse(v.Key.TenantID), uuid.MustParse(v.Key.ID), ApiKeyValidationEnvironment(v.Key.Environment)
	out.TenantId, out.ApiKeyId, out.Environment = &tid, &kid, &env
	out.Scopes, out.RateLimitRpm = v.Key.Scopes, v.Key.RateLimitRPM
	return c.JSON(http.StatusOK, out)
}

func toAPIKeyResponse(k *apikey.Key) ApiKey {
	return ApiKey{
		Id: uuid.MustParse(k.ID), TenantId: uuid.MustParse(k.TenantID), Name: k.Name, Environment: ApiKeyEnvironment(k.Environment),
		KeyPrefix: k.Prefix, Last4: k.Last4, Scopes: k.Scopes, AllowedIps: k.AllowedIPs, RateLimitRpm: k.RateLimitRPM,
		IsActive: k.Active, ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt, UsageCount: k.UsageCount,
		CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt,
	}
}
