package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/telemetry"
	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
)

// SignatureTolerance is how old a webhook-style gateway's notification may be.
const SignatureTolerance = 5 * time.Minute

// WebhookOptions configure a webhook-style gateway.
type WebhookOptions struct {
	// APIURL is the base of the provider's API: POST {APIURL}/checkouts and /refunds.
	APIURL string
	APIKey string
	// Secret signs the provider's notifications.
	Secret string
	// ReturnURL is where the provider's checkout page sends the user when done.
	ReturnURL string
	Client    *http.Client
}

// Webhook is a generic webhook-style gateway: a hosted checkout is created, and the provider
// reports the result with a signed POST to the service.
type Webhook struct{ o WebhookOptions }

// NewWebhook returns a Webhook gateway.
func NewWebhook(o WebhookOptions) *Webhook {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 15 * time.Second, Transport: telemetry.Transport(nil)}
	}
	return &Webhook{o: o}
}

// Start creates a hosted checkout; apperr Unavailable when the provider fails.
func (g *Webhook) Start(ctx context.Context, p *billing.Payment, _ string) (billing.Checkout, error) {
	var out struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	err := postJSON(ctx, g.o.Client, g.o.APIURL+"/checkouts", g.o.APIKey, map[string]any{
		"amount_minor": p.AmountMinor, "currency": p.Currency, "reference": p.ID,
		"description": p.Title, "return_url": g.o.ReturnURL,
	}, &out)
	if err != nil {
		return billing.Checkout{}, err
	}
	if out.ID == "" || out.URL == "" {
		return billing.Checkout{}, apperr.E(apperr.Unavailable, "gateway_unavailable", "the payment gateway answered no checkout")
	}
	return billing.Checkout{Authority: out.ID, RedirectURL: out.URL}, nil
}

// Refund asks the provider to refund amount; apperr Unavailable when it fails.
func (g *Webhook) Refund(ctx context.Context, p *billing.Payment, amount int64) error {
	return postJSON(ctx, g.o.Client, g.o.APIURL+"/refunds", g.o.APIKey, map[string]any{
		"checkout_id": p.Authority, "amount_minor": amount,
	}, nil)
}

// ParseNotification checks the signature header ("t=<unix>,v1=<hex HMAC-SHA256 of
// "<t>.<body>">") in constant time and decodes the body. It returns apperr Unauthenticated for
// a missing, stale or wrong signature and Invalid for a body it cannot read.
func (g *Webhook) ParseNotification(signature string, body []byte, now time.Time) (billing.Notification, error) {
	if err := VerifySignature(g.o.Secret, signature, body, now); err != nil {
		return billing.Notification{}, err
	}
	var in struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			CheckoutID    string `json:"checkout_id"`
			AmountMinor   *int64 `json:"amount_minor"`
			CardLast4     string `json:"card_last4"`
			FailureReason string `json:"failure_reason"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.ID == "" || in.Data.CheckoutID == "" {
		return billing.Notification{}, apperr.E(apperr.Invalid, "invalid_notification", "the notification needs id, type and data.checkout_id")
	}
	n := billing.Notification{EventID: in.ID, Authority: in.Data.CheckoutID, AmountMinor: in.Data.AmountMinor}
	switch in.Type {
	case "payment.succeeded":
		n.Outcome = billing.Outcome{Paid: true, Ref: in.ID, CardLast4: in.Data.CardLast4}
	case "payment.failed":
		n.Outcome = billing.Outcome{FailureReason: in.Data.FailureReason}
		if n.Outcome.FailureReason == "" {
			n.Outcome.FailureReason = "the gateway declined the payment"
		}
	default:
		return billing.Notification{}, apperr.E(apperr.Invalid, "invalid_notification", "type must be payment.succeeded or payment.failed")
	}
	return n, nil
}

// Sign answers the signature header of body at t, as the provider computes it.
func Sign(secret string, body []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

// VerifySignature checks a signature header made by Sign; apperr Unauthenticated when it is
// missing, older or newer than SignatureTolerance, or wrong.
func VerifySignature(secret, header string, body []byte, now time.Time) error {
	bad := apperr.E(apperr.Unauthenticated, "invalid_signature", "the notification signature is missing or wrong")
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if secret == "" || err != nil || len(sigs) == 0 {
		return bad
	}
	if d := now.Sub(time.Unix(unix, 0)); d > SignatureTolerance || d < -SignatureTolerance {
		return bad
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return bad
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return m.Sum(nil)
}
