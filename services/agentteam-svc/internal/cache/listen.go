package cache

import (
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/motionstudio/platform/pkg/pglisten"
)

// Channel is the notification channel of migration 00050's triggers.
const Channel = "agentteam_changes"

// ApplicationName names the listening connection in pg_stat_activity.
const ApplicationName = "agentteam-svc listener"

// outboxCommitted is the payload of a transaction that committed outbox rows.
const outboxCommitted = "o"

// runPrefix starts the payload of a run's event (migration 00070): 'r:<run id>:<kind>'.
const runPrefix = "r:"

// Runs hears of runs' events (runwatch.Hub): Notify gets the payload after "r:", SetLive
// whether the listener listens. Neither may block.
type Runs interface {
	Notify(payload string)
	SetLive(live bool)
}

// NewListener returns a listener that keeps f live while it listens on Channel over its own
// connection to the database at dsn (which must not go through a transaction-pooling proxy),
// registers its agentteam_cache_listening gauge on reg and calls committed (when not nil; it
// must not block) each time a transaction that added outbox rows commits, on any replica, and
// tells runs (when not nil) of runs' events and of whether it listens. It fails when dsn does
// not parse or the gauge cannot be registered.
func NewListener(f *Facts, dsn string, committed func(), runs Runs, log *slog.Logger, reg prometheus.Registerer) (*pglisten.Listener, error) {
	return pglisten.New(pglisten.Options{
		DSN: dsn, Channel: Channel, ApplicationName: ApplicationName,
		Gauge: prometheus.GaugeOpts{
			Name: "agentteam_cache_listening",
			Help: "1 while the process listens for changes of cached roles, board versions and library list pages (and so caches them), else 0.",
		},
		Notify: func(payload string) {
			switch {
			case strings.HasPrefix(payload, runPrefix):
				if runs != nil {
					runs.Notify(payload[len(runPrefix):])
				}
			case payload != outboxCommitted:
				f.Apply(payload)
			case committed != nil:
				committed()
			}
		},
		Live: func(live bool) {
			f.SetLive(live)
			if runs != nil {
				runs.SetLive(live)
			}
		},
	}, log, reg)
}
