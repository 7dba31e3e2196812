package app

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/motionstudio/platform/pkg/jobs"

	"github.com/motionstudio/platform/services/identity-svc/internal/webhook"
)

// Webhook delivery outcomes, the values of the outcome label.
const (
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
	outcomeDisabled  = "disabled"
)

// countedQueue is the delivery queue that counts, in webhook_deliveries_total, the outcome of
// each attempt it records: succeeded (a 2xx), failed (no answer or another status, whether a
// retry is scheduled or not) or disabled (failed and the webhook deactivated: 410 Gone or
// failing for five days). Attempts a stopped worker never recorded are not counted.
type countedQueue struct {
	webhook.Queue
	outcomes *prometheus.CounterVec
}

// newCountedQueue wraps q and registers the counter, every outcome starting at zero, on reg.
func newCountedQueue(q webhook.Queue, reg prometheus.Registerer) (*countedQueue, error) {
	outcomes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "webhook_deliveries_total",
		Help: "Webhook delivery attempts recorded, by outcome (succeeded, failed, disabled).",
	}, []string{"outcome"})
	for _, o := range []string{outcomeSucceeded, outcomeFailed, outcomeDisabled} {
		outcomes.WithLabelValues(o)
	}
	if err := reg.Register(outcomes); err != nil {
		return nil, err
	}
	return &countedQueue{Queue: q, outcomes: outcomes}, nil
}

// Finish records the attempt and, once it is recorded, counts its outcome.
func (q *countedQueue) Finish(ctx context.Context, l jobs.Lease, m *webhook.Message, w *webhook.Webhook, o webhook.Outcome) error {
	if err := q.Queue.Finish(ctx, l, m, w, o); err != nil {
		return err
	}
	outcome := outcomeFailed
	switch {
	case o.Attempt.Succeeded:
		outcome = outcomeSucceeded
	case o.Disable != "":
		outcome = outcomeDisabled
	}
	q.outcomes.WithLabelValues(outcome).Inc()
	return nil
}
