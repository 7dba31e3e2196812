// Package notify is what the identity service tells people (verification codes, password reset
// links, MFA codes) and the Router that picks a channel's Notifier. The senders that deliver
// by SMTP, an SMS gateway or the development log are adapters in package sender. A message
// without recipient is apperr Invalid.
package notify

import (
	"context"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Channels a message travels on.
const (
	Email = "email"
	SMS   = "sms"
)

// Message is one message to one recipient. Data holds the machine-readable values the text
// carries (token, code), for the development outbox only.
type Message struct {
	Channel  string
	To       string
	Subject  string
	Body     string
	Kind     string
	TenantID string
	UserID   string
	Data     map[string]string
}

// Notifier delivers messages.
type Notifier interface {
	Send(ctx context.Context, m Message) error
}

// Router sends each message through the notifier of its channel.
type Router struct {
	Email Notifier
	SMS   Notifier
}

// Send implements Notifier. It returns apperr Invalid for an unknown channel or an empty
// recipient and the errors of the channel's notifier.
func (r Router) Send(ctx context.Context, m Message) error {
	if m.To == "" {
		return apperr.E(apperr.Invalid, "no_recipient", "The message has no recipient.")
	}
	switch m.Channel {
	case Email:
		return r.Email.Send(ctx, m)
	case SMS:
		return r.SMS.Send(ctx, m)
	default:
		return apperr.Invalidf("unknown message channel %q", m.Channel)
	}
}
