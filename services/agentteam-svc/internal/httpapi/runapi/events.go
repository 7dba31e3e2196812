package runapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// Event stream tuning.
const (
	// keepAlive is how often a stream with nothing to send sends a comment line, so that
	// proxies keep the connection and the client knows it is alive.
	keepAlive = 15 * time.Second
	// streamRetryAfter is the Retry-After of a stream refused because the process serves
	// RUN_EVENT_STREAMS already.
	streamRetryAfter = 5 * time.Second
)

// eventsRoute is the route of StreamRunEvents.
const eventsRoute = "/api/assembler/runs/:id/events"

// Streaming reports the routes of this package that answer for longer than the server's
// request timeout (the event stream): httpx.Options.LargeBody exempts them from it.
func Streaming(c echo.Context) bool {
	return c.Path() == eventsRoute && c.Request().Method == http.MethodGet
}

// statusEvent is the data of a status event, as the OpenAPI description of streamRunEvents
// gives it.
type statusEvent struct {
	Status    string    `json:"status"`
	ErrorCode string    `json:"errorCode"`
	Error     string    `json:"error"`
	At        time.Time `json:"at"`
}

// Changes wakes a stream when its run changes, on any replica (runwatch.Hub).
type Changes interface {
	Watch(runID string, kinds ...run.EventKind) (<-chan struct{}, func())
}

// StreamRunEvents streams the run's events after Last-Event-ID as Server-Sent Events until its
// final status was sent, reading them again each time the run changes.
func (h *Handler) StreamRunEvents(c echo.Context, id openapi_types.UUID, params StreamRunEventsParams) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	after, err := lastEventID(params)
	if err != nil {
		return err
	}
	select {
	case h.streams <- struct{}{}:
		defer func() { <-h.streams }()
	default:
		e := apperr.E(apperr.Unavailable, "too_many_streams", "This replica follows as many runs as it may; retry shortly.")
		e.RetryAfter = streamRetryAfter
		return e
	}
	ctx := c.Request().Context()
	// Watch before the first read, so that no change between a read and the wait goes unheard.
	changed, stop := h.changes.Watch(id.String(), run.StatusEvent, run.StepEvent)
	defer stop()
	current, read, err := h.runs.Events(ctx, member, id.String())
	if err != nil {
		return err
	}
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, "text/event-stream")
	res.Header().Set(echo.HeaderCacheControl, "no-cache")
	res.Header().Set("X-Accel-Buffering", "no")
	res.WriteHeader(http.StatusOK)
	s := stream{c: c}
	s.flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for first := true; ; first = false {
		events, err := read(ctx, after)
		if err != nil {
			return h.streamEnded(ctx, id.String(), err)
		}
		for _, e := range events {
			if err := s.event(e); err != nil {
				return h.streamEnded(ctx, id.String(), err)
			}
			after = e.Seq
			if e.Kind == run.StatusEvent && !e.Status.Active() {
				s.flush()
				return nil
			}
		}
		// A run that had ended before the stream started has sent its final status already
		// when nothing follows Last-Event-ID.
		if first && len(events) == 0 && !current.Status.Active() {
			return nil
		}
		if len(events) == run.EventPage {
			continue
		}
		s.flush()
		if err := s.wait(ctx, changed, tick.C); err != nil {
			return h.streamEnded(ctx, id.String(), err)
		}
	}
}

// streamEnded ends a stream whose headers were sent: a client that went away ends it quietly,
// anything else is logged (the status line is gone; the client reconnects with Last-Event-ID).
func (h *Handler) streamEnded(ctx context.Context, runID string, err error) error {
	if ctx.Err() == nil {
		h.log.WarnContext(ctx, "run event stream broke off", "run_id", runID, "error", err)
	}
	return nil
}

// lastEventID is the seq the stream starts after: the Last-Event-ID header, else the
// lastEventId parameter, else 0.
func lastEventID(p StreamRunEventsParams) (int64, error) {
	switch {
	case p.LastEventID != nil:
		n, err := strconv.ParseInt(*p.LastEventID, 10, 64)
		if err != nil || n < 0 {
			return 0, apperr.Invalidf("Last-Event-ID must be the id of an event of this run (a whole number from 0).")
		}
		return n, nil
	case p.LastEventId != nil:
		return *p.LastEventId, nil
	}
	return 0, nil
}

// stream writes Server-Sent Events to one response.
type stream struct{ c echo.Context }

// event writes e with its id and type.
func (s stream) event(e run.Event) error {
	var data any
	switch e.Kind {
	case run.StatusEvent:
		data = statusEvent{Status: string(e.Status), ErrorCode: e.ErrorCode, Error: e.Error, At: e.CreatedAt}
	case run.StepEvent:
		if e.Step != nil {
			data = toRunStep(*e.Step)
		}
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("runapi: encode event %d: %w", e.Seq, err)
	}
	_, err = fmt.Fprintf(s.c.Response(), "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Kind, b)
	return err
}

// wait waits for the run to change, sending a keep-alive comment on each tick meanwhile. Each
// write extends the connection's deadlines past the next tick.
func (s stream) wait(ctx context.Context, changed <-chan struct{}, tick <-chan time.Time) error {
	for {
		httpx.AllowLongRequest(s.c, 2*keepAlive)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
			return nil
		case <-tick:
			if _, err := fmt.Fprint(s.c.Response(), ": keep-alive\n\n"); err != nil {
				return err
			}
			s.flush()
		}
	}
}

// flush sends what was written.
func (s stream) flush() { s.c.Response().Flush() }

// newStreams is the semaphore of a process's open streams.
func newStreams(limit int) chan struct{} { return make(chan struct{}, max(limit, 1)) }
