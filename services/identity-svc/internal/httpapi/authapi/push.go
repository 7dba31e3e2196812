package authapi

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/identity-svc/internal/push"
)

// SubscribePush stores the caller's Web Push subscription.
func (h *Handler) SubscribePush(c echo.Context) error {
	var req PushSubscribeRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	claims := authn.FromContext(c)
	ua := str(req.UserAgent)
	if ua == "" {
		ua = c.Request().UserAgent()
	}
	sub, err := h.push.Subscribe(c.Request().Context(), push.Subscription{
		UserID: claims.Subject, TenantID: claims.TenantID, Endpoint: req.Endpoint,
		P256DH: req.Keys.P256dh, Auth: req.Keys.Auth, UserAgent: ua,
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, PushSubscription{Id: uuid.MustParse(sub.ID), Endpoint: sub.Endpoint, UserAgent: sub.UserAgent, CreatedAt: sub.CreatedAt})
}

// UnsubscribePush removes one or all of the caller's subscriptions; the body is optional.
func (h *Handler) UnsubscribePush(c echo.Context) error {
	var req PushUnsubscribeRequest
	if err := httpx.BindOptional(c, &req); err != nil {
		return err
	}
	if err := h.push.Unsubscribe(c.Request().Context(), authn.FromContext(c).Subject, str(req.Endpoint)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
