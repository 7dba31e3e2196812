// Package gateway holds the payment gateways, the outbound HTTP clients of package billing's
// Gateway interface: a local sandbox, a redirect-style and a webhook-style provider.
package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/telemetry"
	"github.com/motionstudio/platform/services/identity-svc/internal/billing"
)

// Sandbox is a local gateway for development and tests: its checkout page is the redirect
// callback itself, reporting success, and it verifies and refunds everything.
type Sandbox struct{}

// Start answers a random authority and a redirect straight to callbackURL.
func (Sandbox) Start(_ context.Context, _ *billing.Payment, callbackURL string) (billing.Checkout, error) {
	authority := "sbx_" + randomHex(16)
	q := url.Values{"Authority": {authority}, "Status": {"OK"}}
	return billing.Checkout{Authority: authority, RedirectURL: callbackURL + "?" + q.Encode()}, nil
}

// Verify reports every sandbox payment as paid.
func (Sandbox) Verify(_ context.Context, p *billing.Payment) (billing.Outcome, error) {
	return billing.Outcome{Paid: true, Ref: p.Authority, CardLast4: "4242"}, nil
}

// Refund accepts every sandbox refund.
func (Sandbox) Refund(context.Context, *billing.Payment, int64) error { return nil }

// RedirectOptions configure a redirect-style gateway.
type RedirectOptions struct {
	// APIURL is the base of the provider's API: POST {APIURL}/request, /verify and /refund.
	APIURL string
	// StartURL is the base of the page users pay on: {StartURL}/{authority}.
	StartURL   string
	MerchantID string
	Client     *http.Client
}

// Redirect is a generic redirect-style gateway: the payment is requested (the provider answers
// an authority), the user is redirected to the provider's page, comes back to the callback with
// the authority and a status, and the payment is verified with the provider.
type Redirect struct{ o RedirectOptions }

// NewRedirect returns a Redirect gateway.
func NewRedirect(o RedirectOptions) *Redirect {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 15 * time.Second, Transport: telemetry.Transport(nil)}
	}
	return &Redirect{o: o}
}

// Start requests an authority; apperr Unavailable when the provider fails.
func (g *Redirect) Start(ctx context.Context, p *billing.Payment, callbackURL string) (billing.Checkout, error) {
	var out struct {
		Authority string `json:"authority"`
	}
	err := postJSON(ctx, g.o.Client, g.o.APIURL+"/request", "", map[string]any{
		"merchant_id": g.o.MerchantID, "amount_minor": p.AmountMinor, "currency": p.Currency,
		"description": p.Title, "callback_url": callbackURL, "order_id": p.ID,
	}, &out)
	if err != nil {
		return billing.Checkout{}, err
	}
	if out.Authority == "" {
		return billing.Checkout{}, apperr.E(apperr.Unavailable, "gateway_unavailable", "the payment gateway answered no authority")
	}
	return billing.Checkout{Authority: out.Authority, RedirectURL: g.o.StartURL + "/" + url.PathEscape(out.Authority)}, nil
}

// Verify asks the provider whether the payment was made; apperr Unavailable when it fails.
func (g *Redirect) Verify(ctx context.Context, p *billing.Payment) (billing.Outcome, error) {
	var out struct {
		Status    string `json:"status"`
		RefID     string `json:"ref_id"`
		CardLast4 string `json:"card_last4"`
		Message   string `json:"message"`
	}
	err := postJSON(ctx, g.o.Client, g.o.APIURL+"/verify", "", map[string]any{
		"merchant_id": g.o.MerchantID, "authority": p.Authority, "amount_minor": p.AmountMinor,
	}, &out)
	if err != nil {
		return billing.Outcome{}, err
	}
	if out.Status != "OK" {
		reason := out.Message
		if reason == "" {
			reason = "the gateway did not verify the payment"
		}
		return billing.Outcome{FailureReason: reason}, nil
	}
	return billing.Outcome{Paid: true, Ref: out.RefID, CardLast4: out.CardLast4}, nil
}

// Refund asks the provider to refund amount; apperr Unavailable when it fails.
func (g *Redirect) Refund(ctx context.Context, p *billing.Payment, amount int64) error {
	return postJSON(ctx, g.o.Client, g.o.APIURL+"/refund", "", map[string]any{
		"merchant_id": g.o.MerchantID, "authority": p.Authority, "amount_minor": amount,
	}, nil)
}

// postJSON POSTs in as JSON and decodes a 2xx answer into out (when not nil); any failure is
// apperr Unavailable, since the gateway is an external dependency.
func postJSON(ctx context.Context, client *http.Client, target, bearer string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("billing: encode gateway request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return apperr.Wrap(err, apperr.Unavailable, "gateway_unavailable", "the payment gateway is misconfigured")
	}
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := client.Do(req)
	if err != nil {
		return apperr.Wrap(err, apperr.Unavailable, "gateway_unavailable", "the payment gateway cannot be reached")
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return apperr.Wrap(err, apperr.Unavailable, "gateway_unavailable", "the payment gateway's answer was cut short")
	}
	if resp.StatusCode/100 != 2 {
		return apperr.Wrap(fmt.Errorf("billing: gateway %s answered %d", target, resp.StatusCode),
			apperr.Unavailable, "gateway_unavailable", "the payment gateway refused the request")
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return apperr.Wrap(err, apperr.Unavailable, "gateway_unavailable", "the payment gateway answered malformed JSON")
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
