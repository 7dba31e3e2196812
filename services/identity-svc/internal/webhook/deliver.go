package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/jobs"
)

// Message states: Queued (a wake-up is on its way), Processing (leased by a worker),
// Scheduled (retry at NextAttemptAt), and the terminal Succeeded, Failed and Cancelled.
const (
	StatusQueued     = "Queued"
	StatusProcessing = "Processing"
	StatusScheduled  = "Scheduled"
	StatusSucceeded  = "Succeeded"
	StatusFailed     = "Failed"
	StatusCancelled  = "Cancelled"
)

// Delivery limits.
const (
	// MaxFailingFor is how long a webhook may fail without a success before it is disabled.
	MaxFailingFor = 5 * 24 * time.Hour
	// MaxRetryAfter caps how long a receiver's Retry-After can postpone a retry.
	MaxRetryAfter = 24 * time.Hour
	// MaxStoredBody is how much of a response body an attempt keeps.
	MaxStoredBody = 2048
)

// DefaultSchedule returns the delay before each retry after the first attempt.
func DefaultSchedule() []time.Duration {
	return []time.Duration{
		5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
	}
}

// Message is one event to deliver to one webhook.
type Message struct {
	ID, WebhookID, TenantID, EventID, EventType string
	Body                                        []byte
	Attempt                                     int
	// Unrecorded are the earlier attempts (numbers below Attempt) without a recorded outcome:
	// their worker stopped (a crash, a lost database) after claiming the message, maybe after
	// the endpoint got the request.
	Unrecorded []int
}

// LostOutcome is the error an attempt without a recorded outcome is listed with.
const LostOutcome = "The worker stopped before it recorded this attempt's outcome; the endpoint may have received it."

// Response is what a webhook answered.
type Response struct {
	Status     int
	Body       []byte
	RetryAfter time.Duration
	Duration   time.Duration
}

// Sender POSTs a signed body to a URL; an error means no HTTP answer was received.
type Sender interface {
	Send(ctx context.Context, url string, headers map[string]string, body []byte) (Response, error)
}

// Outcome is the result of one attempt, written in one transaction.
type Outcome struct {
	Attempt Attempt
	// Lost records the message's earlier attempts whose outcome was never recorded.
	Lost          []Attempt
	Status        string
	NextAttemptAt *time.Time
	// Disable, when not empty, deactivates the webhook with this reason.
	Disable string
}

// Queue claims and finishes messages.
type Queue interface {
	// Claim leases a Queued message (or one whose lease lapsed) to owner for length and returns
	// it with its webhook; jobs.ErrNoWork when it is not claimable, a jobs.HeldError while
	// another worker's lease on it is live. A message of an inactive webhook is cancelled
	// (jobs.ErrNoWork).
	Claim(ctx context.Context, messageID, owner string, length time.Duration) (*Message, *Webhook, jobs.Lease, error)
	// Renew extends the lease; jobs.ErrLeaseLost when l no longer holds the message.
	Renew(ctx context.Context, l jobs.Lease) error
	// Finish records the attempt (and the lost ones), the message's new state and the
	// webhook's counters if l still holds the message, jobs.ErrLeaseLost otherwise.
	Finish(ctx context.Context, l jobs.Lease, m *Message, w *Webhook, o Outcome) error
}

// ErrRefusedDestination marks a send refused for its destination address (private, loopback,
// reserved: the outbound SSRF guard, checked when connecting). Retrying cannot succeed, so the
// message fails at once with that reason.
var ErrRefusedDestination = errors.New("webhook: destination address refused")

// RefusedReason is what the delivery log says of a send refused for its destination address.
const RefusedReason = "The server's address is not allowed."

// failedReason is what the delivery log says of a failed send whose Sender gave no SendError.
const failedReason = "The delivery failed."

// SendError is a send that got no HTTP answer. Reason says what happened in words fit for the
// tenant's delivery log ("connection refused", "timeout"): never a resolved address, a port or
// other internal detail, which would let a tenant map the platform's network. Err is the full
// cause, for the server's own log.
type SendError struct {
	Reason string
	Err    error
}

func (e *SendError) Error() string { return e.Reason }

// Unwrap returns the cause, so errors.Is sees ErrRefusedDestination through a SendError.
func (e *SendError) Unwrap() error { return e.Err }

// logReason is the text the delivery log shows for a failed send: the SendError's reason, or
// a fixed text, never the error's own message.
func logReason(err error) string {
	var se *SendError
	switch {
	case errors.As(err, &se) && se.Reason != "":
		return se.Reason
	case errors.Is(err, ErrRefusedDestination):
		return RefusedReason
	}
	return failedReason
}

// Deliverer runs delivery attempts.
type Deliverer struct {
	queue    Queue
	sender   Sender
	sealer   Sealer
	schedule []time.Duration
	lease    time.Duration
	owner    string
	now      func() time.Time
	newID    func() string
}

// NewDeliverer returns a Deliverer retrying on schedule (DefaultSchedule when empty).
func NewDeliverer(queue Queue, sender Sender, sealer Sealer, schedule []time.Duration, now func() time.Time, newID func() string) *Deliverer {
	if len(schedule) == 0 {
		schedule = DefaultSchedule()
	}
	return &Deliverer{queue: queue, sender: sender, sealer: sealer, schedule: schedule, lease: time.Minute, owner: newID(), now: now, newID: newID}
}

// Deliver makes one attempt of the message if it can be claimed, renewing the lease while it
// sends. It returns an error when the database fails, so that the wake-up is retried, and
// Claim's jobs.HeldError while another worker's lease is live; nil when the message needs no
// attempt or another worker took it over.
func (d *Deliverer) Deliver(ctx context.Context, messageID string) error {
	m, w, l, err := d.queue.Claim(ctx, messageID, d.owner, d.lease)
	if errors.Is(err, jobs.ErrNoWork) {
		return nil
	}
	if err != nil {
		return err
	}
	secret, err := d.sealer.Open(w.SealedSecret, []byte(w.ID))
	if err != nil {
		return fmt.Errorf("webhook: open secret of %s: %w", w.ID, err)
	}
	sent := d.now()
	headers, err := Sign(string(secret), m.EventID, sent, m.Body)
	if err != nil {
		return err
	}
	var o Outcome
	err = jobs.Keep(ctx, l, d.queue.Renew, func(ctx context.Context) error {
		resp, sendErr := d.sender.Send(ctx, w.URL, headers, m.Body)
		o = d.outcome(m, w, sent, resp, sendErr)
		return nil
	})
	if err == nil {
		err = d.queue.Finish(ctx, l, m, w, o)
	}
	if errors.Is(err, jobs.ErrLeaseLost) {
		return nil
	}
	return err
}

func (d *Deliverer) outcome(m *Message, w *Webhook, sent time.Time, resp Response, sendErr error) Outcome {
	now := d.now()
	var lost []Attempt
	for _, n := range m.Unrecorded {
		reason := LostOutcome
		lost = append(lost, Attempt{
			ID: d.newID(), MessageID: m.ID, WebhookID: w.ID, EventType: m.EventType, RequestURL: w.URL,
			ErrorMessage: &reason, Attempt: n, CreatedAt: sent,
		})
	}
	a := Attempt{
		ID: d.newID(), MessageID: m.ID, WebhookID: w.ID, EventType: m.EventType, RequestURL: w.URL,
		DurationMS: int(resp.Duration / time.Millisecond), Attempt: m.Attempt, CreatedAt: sent,
	}
	if sendErr != nil {
		msg := logReason(sendErr)
		a.ErrorMessage = &msg
	} else {
		status, body := resp.Status, truncate(string(resp.Body), MaxStoredBody)
		a.ResponseStatus, a.ResponseBody = &status, &body
	}
	o := Outcome{Attempt: a, Lost: lost}
	switch {
	case errors.Is(sendErr, ErrRefusedDestination):
		o.Status = StatusFailed
		return o
	case sendErr == nil && resp.Status >= 200 && resp.Status < 300:
		o.Attempt.Succeeded, o.Attempt.DeliveredAt, o.Status = true, &now, StatusSucceeded
		return o
	case sendErr == nil && resp.Status == 410:
		o.Status, o.Disable = StatusFailed, "the endpoint answered 410 Gone"
		return o
	}
	if w.FailingSince != nil && now.Sub(*w.FailingSince) >= MaxFailingFor {
		o.Status, o.Disable = StatusFailed, "failing for more than 5 days"
		return o
	}
	if m.Attempt > len(d.schedule) {
		o.Status = StatusFailed
		return o
	}
	delay := d.schedule[m.Attempt-1]
	if resp.RetryAfter > delay {
		delay = min(resp.RetryAfter, MaxRetryAfter)
	}
	next := now.Add(delay)
	o.Status, o.NextAttemptAt = StatusScheduled, &next
	return o
}

// Sign returns the Standard Webhooks headers for body sent as message id at t with a whsec_
// secret.
func Sign(secret, id string, t time.Time, body []byte) (map[string]string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		return nil, fmt.Errorf("webhook: decode secret: %w", err)
	}
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	return map[string]string{
		"webhook-id":        id,
		"webhook-timestamp": ts,
		"webhook-signature": "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)),
		"Content-Type":      "application/json",
	}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
