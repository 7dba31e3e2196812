// Package sender delivers notify.Messages: an SMTP adapter that works against any SMTP server,
// an SMS adapter for an HTTP SMS gateway, and a development adapter that writes each message to
// the log and to the notification_outbox table. A failed delivery is apperr Unavailable.
package sender

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/motionstudio/platform/services/identity-svc/internal/notify"
)

// Recorder keeps a copy of each message (the notification_outbox table).
type Recorder interface {
	Record(ctx context.Context, m notify.Message) error
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

// Send implements notify.Notifier; it returns the recorder's errors.
func (d *Dev) Send(ctx context.Context, m notify.Message) error {
	d.log.InfoContext(ctx, "notification (dev: not delivered)", slog.String("channel", m.Channel),
		slog.String("to", m.To), slog.String("kind", m.Kind), slog.String("subject", m.Subject), slog.String("body", m.Body))
	if err := d.recorder.Record(ctx, m); err != nil {
		return fmt.Errorf("notify: record %s: %w", m.Kind, err)
	}
	return nil
}
