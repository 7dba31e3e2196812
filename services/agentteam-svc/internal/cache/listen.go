package cache

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/motionstudio/platform/pkg/pglisten"
)

// Channel is the notification channel of migration 00050's triggers.
const Channel = "agentteam_changes"

// ApplicationName names the listening connection in pg_stat_activity.
const ApplicationName = "agentteam-svc listener"

// outboxCommitted is the payload of a transaction that committed outbox rows.
const outboxCommitted = "o"

// NewListener returns a listener that keeps f live while it listens on Channel over its own
// connection to the database at dsn (which must not go through a transaction-pooling proxy),
// registers its agentteam_cache_listening gauge on reg and calls committed (when not nil; it
// must not block) each time a transaction that added outbox rows commits, on any replica. It
// fails when dsn does not parse or the gauge cannot be registered.
func NewListener(f *Facts, dsn string, committed func(), log *slog.Logger, reg prometheus.Registerer) (*pglisten.Listener, error) {
	return pglisten.New(pglisten.Options{
		DSN: dsn, Channel: Channel, ApplicationName: ApplicationName,
		Gauge: prometheus.GaugeOpts{
			Name: "agentteam_cache_listening",
			Help: "1 while the process listens for changes of cached roles, board versions and library list pages (and so caches them), else 0.",
		},
		Notify: func(payload string) {
			if payload != outboxCommitted {
				f.Apply(payload)
			} else if committed != nil {
				committed()
			}
		},
		Live: f.SetLive,
	}, log, reg)
}
