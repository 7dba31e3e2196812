package sender

import (
	"github.com/motionstudio/platform/services/identity-svc/internal/notify"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/motionstudio/platform/pkg/outbound"
)

// Doer sends an HTTP request and reads the answer (outbound.Client).
type Doer interface {
	Do(ctx context.Context, req *http.Request) (*outbound.Response, error)
}

// SMSConfig addresses an HTTP SMS gateway.
type SMSConfig struct {
	// URL receives POST {"from","to","text"} as JSON.
	URL string
	// APIKey is sent as a bearer token.
	APIKey string
	// From is the sender id.
	From string
}

// SMSGateway sends text messages through an HTTP SMS gateway.
type SMSGateway struct {
	cfg  SMSConfig
	http Doer
}

// NewSMSGateway returns an SMS notifier that calls the gateway through client.
func NewSMSGateway(cfg SMSConfig, client Doer) *SMSGateway {
	return &SMSGateway{cfg: cfg, http: client}
}

// Send implements notify.Notifier. It returns apperr Unavailable when the gateway cannot be reached or
// answers anything but 2xx, and the client's apperr Invalid for a refused gateway address.
func (g *SMSGateway) Send(ctx context.Context, m notify.Message) error {
	body, err := json.Marshal(map[string]string{"from": g.cfg.From, "to": m.To, "text": m.Body})
	if err != nil {
		return fmt.Errorf("notify: encode sms: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return unavailable("sms request", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if g.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+g.cfg.APIKey)
	}
	resp, err := g.http.Do(ctx, req)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return unavailable("sms gateway", fmt.Errorf("status %d", resp.StatusCode))
	}
	return nil
}
