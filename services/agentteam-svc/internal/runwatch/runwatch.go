// Package runwatch tells whoever follows a run in this process (an event stream, the worker
// executing it) that the run changed, whichever replica changed it: the run_events triggers
// (migration 00070) notify 'r:<run id>:<kind>' at the commit of every status change and step,
// the process's one listening connection (cache.NewListener) hands the rest of the payload to
// Hub.Notify, and the Hub wakes the run's watchers of that kind. A wake-up is only a hint to
// read the database again, never the news itself: while the listener does not listen, the Hub
// wakes every watcher each poll interval instead, so a watcher misses nothing, only hears it
// later.
package runwatch

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// key names the watchers of one kind of change of one run.
type key struct {
	run  string
	kind run.EventKind
}

// Hub wakes the watchers of runs; the zero value is not usable, use New.
type Hub struct {
	poll     time.Duration
	mu       sync.Mutex
	live     bool
	watchers map[key]map[chan struct{}]struct{}
}

// New returns a Hub that, while its listener does not listen, wakes every watcher each poll.
func New(poll time.Duration) *Hub {
	return &Hub{poll: poll, watchers: map[key]map[chan struct{}]struct{}{}}
}

// Watch returns a channel that receives (coalesced: at most one wake-up waits) whenever the
// run changes in one of kinds, and the function that stops watching. Watch before reading what
// the wake-up announces, so that no change between the read and the wait goes unheard.
func (h *Hub) Watch(runID string, kinds ...run.EventKind) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range kinds {
		set := h.watchers[key{runID, k}]
		if set == nil {
			set = map[chan struct{}]struct{}{}
			h.watchers[key{runID, k}] = set
		}
		set[ch] = struct{}{}
	}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, k := range kinds {
			delete(h.watchers[key{runID, k}], ch)
			if len(h.watchers[key{runID, k}]) == 0 {
				delete(h.watchers, key{runID, k})
			}
		}
	}
}

// Notify wakes the watchers a notification's payload ('<run id>:<kind>') names; it never
// blocks.
func (h *Hub) Notify(payload string) {
	runID, kind, _ := strings.Cut(payload, ":")
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.watchers[key{runID, run.EventKind(kind)}] {
		wake(ch)
	}
}

// SetLive records whether the listener listens; a listener that (re)starts listening may have
// missed notifications, so every watcher is woken.
func (h *Hub) SetLive(live bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.live = live
	h.wakeAll()
}

// Run wakes every watcher each poll interval while the listener does not listen, until ctx
// is done; it returns nil.
func (h *Hub) Run(ctx context.Context) error {
	return service.Every(ctx, h.poll, func(context.Context) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if !h.live {
			h.wakeAll()
		}
	})
}

// wakeAll wakes every watcher; h.mu is held.
func (h *Hub) wakeAll() {
	for _, set := range h.watchers {
		for ch := range set {
			wake(ch)
		}
	}
}

// wake leaves one wake-up on ch unless one already waits there.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
