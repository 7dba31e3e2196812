package billing

import (
	"context"
	"time"
)

// Checkout is where a started payment sends the user, and the gateway's id for it.
type Checkout struct {
	Authority   string
	RedirectURL string
}

// Gateway starts and refunds payments with a payment provider.
type Gateway interface {
	// Start registers the payment with the provider; callbackURL is where a redirect-style
	// provider sends the user back.
	Start(ctx context.Context, p *Payment, callbackURL string) (Checkout, error)
	// Refund gives amount of the payment back through the provider.
	Refund(ctx context.Context, p *Payment, amount int64) error
}

// Verifier is a redirect-style gateway, which confirms a payment when the user comes back.
type Verifier interface {
	Verify(ctx context.Context, p *Payment) (Outcome, error)
}

// Notification is a webhook-style gateway's authenticated report on a checkout.
type Notification struct {
	EventID   string
	Authority string
	Outcome   Outcome
	// AmountMinor is the amount the provider collected, when it says.
	AmountMinor *int64
}

// NotificationParser authenticates and decodes a webhook-style gateway's notification.
type NotificationParser interface {
	ParseNotification(signature string, body []byte, now time.Time) (Notification, error)
}
