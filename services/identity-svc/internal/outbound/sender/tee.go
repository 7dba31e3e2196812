package sender

import (
	"context"

	"github.com/motionstudio/platform/services/identity-svc/internal/notify"
)

// Tee sends each message through every one of its notifiers in order. Development pairs Dev
// with SMTP, so that every email stays in the log and the notification_outbox table and also
// travels over SMTP to a local catcher (MailHog, which scripts/infra.sh starts).
type Tee []notify.Notifier

// Send implements notify.Notifier. It stops at the first notifier that fails and returns its
// error, so a message the catcher did not take fails as it would in production.
func (t Tee) Send(ctx context.Context, m notify.Message) error {
	for _, n := range t {
		if err := n.Send(ctx, m); err != nil {
			return err
		}
	}
	return nil
}
