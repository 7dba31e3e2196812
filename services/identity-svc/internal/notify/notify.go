// Package notify sends the identity service's messages to people: verification codes, password
// reset links and MFA codes, by email or SMS. Senders implement Notifier: an SMTP adapter that
// works against any SMTP server, an SMS adapter for an HTTP SMS gateway, and a development
// adapter that writes each message to the log and to the notification_outbox table. A failed
// delivery is apperr Unavailable; a message without recipient is apperr Invalid.
package notify

import (
	"context"
	"fmt"
	"log/slog"

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

// Recorder keeps a copy of each message (the notification_outbox table).
type Recorder interface {
	Record(ctx context.Context, m Message) error
}

// Dev is the development notifier: it logs each message, text included, and records it, so
// that developers and tests read codes without a mail server. It must not run in production,
// because it writes codes to the log.
type Dev struct {
	log      *slog.Logger
	recorder Recorder
}

// NewDev returns a Dev notifier.
func NewDev(log *slog.Logger, recorder Recorder) *Dev { return &Dev{log: log, recorder: recorder} }

// Send implements Notifier; it returns the recorder's errors.
func (d *Dev) Send(ctx context.Context, m Message) error {
	d.log.InfoContext(ctx, "notification (dev: not delivered)", slog.String("channel", m.Channel),
		slog.String("to", m.To), slog.String("kind", m.Kind), slog.String("subject", m.Subject), slog.String("body", m.Body))
	if err := d.recorder.Record(ctx, m); err != nil {
		return fmt.Errorf("notify: record %s: %w", m.Kind, err)
	}
	return nil
}
