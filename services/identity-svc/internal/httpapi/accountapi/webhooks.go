package accountapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/identity-svc/internal/webhook"
)

// Webhooks is what the handlers need of the webhook service.
type Webhooks interface {
	Create(ctx context.Context, a actor.Actor, tenantID, name, url string, events []string) (*webhook.Webhook, string, error)
	List(ctx context.Context, a actor.Actor, tenantID string) ([]*webhook.Webhook, error)
	Delete(ctx context.Context, a actor.Actor, tenantID, id string) error
	Attempts(ctx context.Context, a actor.Actor, tenantID, id string) ([]*webhook.Attempt, error)
}

// ListWebhooks answers a tenant's webhooks.
func (h *Handler) ListWebhooks(c echo.Context, tenantID openapi_types.UUID) error {
	hooks, err := h.webhooks.List(c.Request().Context(), caller.Of(c), tenantID.String())
	if err != nil {
		return err
	}
	out := WebhookList{Data: make([]Webhook, len(hooks))}
	for i, w := range hooks {
		out.Data[i] = toWebhookResponse(w)
	}
	return c.JSON(http.StatusOK, out)
}

// CreateWebhook subscribes an endpoint and answers its secret once.
func (h *Handler) CreateWebhook(c echo.Context, tenantID openapi_types.UUID) error {
	var body WebhookCreate
	if err := httpx.Bind(c, &body); err != nil {
		return err
	}
	names := make([]string, len(body.Events))
	for i, e := range body.Events {
		names[i] = string(e)
	}
	w, secret, err := h.webhooks.Create(c.Request().Context(), caller.Of(c), tenantID.String(), body.Name, body.Url, names)
	if err != nil {
		return err
	}
	r := toWebhookResponse(w)
	return c.JSON(http.StatusCreated, WebhookCreated{
		Id: r.Id, Name: r.Name, Url: r.Url, Events: r.Events, IsActive: r.IsActive, DisabledReason: r.DisabledReason,
		LastTriggeredAt: r.LastTriggeredAt, LastStatusCode: r.LastStatusCode, ConsecutiveFailures: r.ConsecutiveFailures,
		CreatedAt: r.CreatedAt, Secret: secret,
	})
}

// DeleteWebhook deletes a webhook.
func (h *Handler) DeleteWebhook(c echo.Context, tenantID, webhookID openapi_types.UUID) error {
	if err := h.webhooks.Delete(c.Request().Context(), caller.Of(c), tenantID.String(), webhookID.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ListWebhookDeliveries answers a webhook's recent attempts.
func (h *Handler) ListWebhookDeliveries(c echo.Context, tenantID, webhookID openapi_types.UUID) error {
	attempts, err := h.webhooks.Attempts(c.Request().Context(), caller.Of(c), tenantID.String(), webhookID.String())
	if err != nil {
		return err
	}
	out := WebhookDeliveryList{Data: make([]WebhookDelivery, len(attempts))}
	for i, a := range attempts {
		out.Data[i] = WebhookDelivery{
			Id: uuid.MustParse(a.ID), EventType: a.EventType, RequestUrl: a.RequestURL, ResponseStatus: a.ResponseStatus,
			ResponseBody: a.ResponseBody, ErrorMessage: a.ErrorMessage, DurationMs: a.DurationMS, Attempt: a.Attempt,
			Succeeded: a.Succeeded, DeliveredAt: a.DeliveredAt, CreatedAt: a.CreatedAt,
		}
	}
	return c.JSON(http.StatusOK, out)
}

func toWebhookResponse(w *webhook.Webhook) Webhook {
	return Webhook{
		Id: uuid.MustParse(w.ID), Name: w.Name, Url: w.URL, Events: w.Events, IsActive: w.Active,
		DisabledReason: w.DisabledReason, LastTriggeredAt: w.LastTriggeredAt, LastStatusCode: w.LastStatusCode,
		ConsecutiveFailures: w.ConsecutiveFailures, CreatedAt: w.CreatedAt,
	}
}
