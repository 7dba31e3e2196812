package app_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/identity-svc/internal/config"
)

const (
	webhookGatewayKey    = "gw-api-key-0123"
	webhookGatewaySecret = "gw-signing-secret-0123456789"
	paymentReturnURL     = "https://app.example.test/payments/result"
	// gatewayDownAmount is a price the fake provider refuses to start, as if it were down.
	gatewayDownAmount = 13
)

// fakeGateway is a local payment provider speaking both gateway protocols: the redirect style
// (/request, /verify, /refund) and the webhook style (/checkouts, /refunds).
type fakeGateway struct {
	srv      *httptest.Server
	mu       sync.Mutex
	paid     map[string]bool
	verifies map[string]int
	refunds  []map[string]any
}

var (
	gateway *fakeGateway
	// serviceBase is the address of the service under test, for requests the contract client
	// cannot make (a redirect it must not follow).
	serviceBase string
)

func startFakeGateway() *fakeGateway {
	g := &fakeGateway{paid: map[string]bool{}, verifies: map[string]int{}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	DeferCleanup(g.srv.Close)
	return g
}

func (g *fakeGateway) serve(w http.ResponseWriter, r *http.Request) {
	var in map[string]any
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	answer := map[string]any{}
	switch r.URL.Path {
	case "/redirect/request":
		if in["amount_minor"] == float64(gatewayDownAmount) {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		answer["authority"] = "A" + uuid.NewString()
	case "/redirect/verify":
		a, _ := in["authority"].(string)
		g.verifies[a]++
		answer["status"], answer["message"] = "NOK", "not paid"
		if g.paid[a] {
			answer["status"], answer["ref_id"], answer["card_last4"] = "OK", "REF-"+a[:8], "1234"
		}
	case "/webhook/checkouts":
		if r.Header.Get("Authorization") != "Bearer "+webhookGatewayKey {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		id := "chk_" + uuid.NewString()
		answer["id"], answer["url"] = id, "https://checkout.example.test/"+id
	case "/redirect/refund", "/webhook/refunds":
		in["path"] = r.URL.Path
		g.refunds = append(g.refunds, in)
	default:
		http.NotFound(w, r)
		return
	}
	_ = json.NewEncoder(w).Encode(answer)
}

// markPaid makes the provider verify the authority as paid.
func (g *fakeGateway) markPaid(authority string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.paid[authority] = true
}

func (g *fakeGateway) verifyCount(authority string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.verifies[authority]
}

func (g *fakeGateway) refundsOf(authority string) []map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []map[string]any
	for _, r := range g.refunds {
		if r["authority"] == authority || r["checkout_id"] == authority {
			out = append(out, r)
		}
	}
	return out
}

// configureBilling points the redirect and webhook gateways at a local fake provider and
// enables the sandbox.
func configureBilling(c *config.Config) {
	GinkgoHelper()
	gateway = startFakeGateway()
	Expect(gateway.srv.URL).To(HavePrefix("http://127.0.0.1:"))
	c.Billing.SandboxEnabled = true
	c.Billing.ReturnURL = paymentReturnURL
	c.Billing.RedirectAPIURL = gateway.srv.URL + "/redirect"
	c.Billing.RedirectStartURL = "https://pay.example.test/start"
	c.Billing.RedirectMerchant = "merchant-1"
	c.Billing.WebhookAPIURL = gateway.srv.URL + "/webhook"
	c.Billing.WebhookAPIKey = webhookGatewayKey
	c.Billing.WebhookSecret = webhookGatewaySecret
}
