package config

// Billing holds the settings of plans, payments and their gateways. A gateway is offered when
// its API URL is set (the sandbox when enabled).
type Billing struct {
	// CallbackBaseURL is the public address of /v1/payments/callback, as gateways reach it.
	CallbackBaseURL string `env:"PAYMENT_CALLBACK_BASE_URL" default:"http://127.0.0.1:8081/v1/payments/callback"`
	// ReturnURL is the UI page users land on after paying (payment_id and status are added).
	ReturnURL string `env:"PAYMENT_RETURN_URL" default:"http://127.0.0.1:3000/payments/result"`
	// SandboxEnabled offers the local Sandbox gateway; never in production.
	SandboxEnabled bool `env:"PAYMENT_SANDBOX_ENABLED" default:"false"`

	// RedirectAPIURL is the base of the redirect-style gateway's API (/request, /verify, /refund).
	RedirectAPIURL string `env:"PAYMENT_REDIRECT_API_URL"`
	// RedirectStartURL is the base of its payment page ({base}/{authority}).
	RedirectStartURL string `env:"PAYMENT_REDIRECT_START_URL"`
	// RedirectMerchant is the merchant id the redirect-style gateway knows this platform by.
	RedirectMerchant string `env:"PAYMENT_REDIRECT_MERCHANT_ID"`

	// WebhookAPIURL is the base of the webhook-style gateway's API (/checkouts, /refunds).
	WebhookAPIURL string `env:"PAYMENT_WEBHOOK_API_URL"`
	// WebhookAPIKey authenticates calls to the webhook-style gateway's API.
	WebhookAPIKey string `env:"PAYMENT_WEBHOOK_API_KEY"`
	// WebhookSecret verifies the gateway's notification signatures.
	WebhookSecret string `env:"PAYMENT_WEBHOOK_SECRET"`
}
