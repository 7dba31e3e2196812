package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/services/identity-svc/internal/webhook"
)

// fakeQueue answers Claim with what it is given and records the outcomes.
type fakeQueue struct {
	claimErr error
	message  *webhook.Message
	hook     *webhook.Webhook
	finished []webhook.Outcome
}

func (q *fakeQueue) Claim(_ context.Context, id, owner string, length time.Duration) (*webhook.Message, *webhook.Webhook, jobs.Lease, error) {
	return q.message, q.hook, jobs.Lease{ID: id, Owner: owner, Attempt: 1, Until: time.Now().Add(length), Length: length}, q.claimErr
}

func (q *fakeQueue) Renew(context.Context, jobs.Lease) error { return nil }

func (q *fakeQueue) Finish(_ context.Context, _ jobs.Lease, _ *webhook.Message, _ *webhook.Webhook, o webhook.Outcome) error {
	q.finished = append(q.finished, o)
	return nil
}

type plainSealer struct{}

func (plainSealer) Seal(plain, _ []byte) ([]byte, error)  { return plain, nil }
func (plainSealer) Open(sealed, _ []byte) ([]byte, error) { return sealed, nil }

type sendFunc func() (webhook.Response, error)

func (f sendFunc) Send(context.Context, string, map[string]string, []byte) (webhook.Response, error) {
	return f()
}

var _ = Describe("delivering a message", func() {
	newDeliverer := func(q *fakeQueue, send sendFunc) *webhook.Deliverer {
		return webhook.NewDeliverer(q, send, plainSealer{}, nil, time.Now, func() string { return "attempt-1" })
	}
	claimable := func() *fakeQueue {
		return &fakeQueue{
			message: &webhook.Message{ID: "m1", WebhookID: "w1", EventID: "e1", EventType: "user.banned", Body: []byte(`{}`), Attempt: 1},
			hook:    &webhook.Webhook{ID: "w1", URL: "http://169.254.169.254/hook", SealedSecret: []byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")},
		}
	}

	It("answers the lease of a live worker, so the wake-up comes back when it ends", func() {
		until := time.Now().Add(time.Minute)
		q := &fakeQueue{claimErr: jobs.HeldError{Until: until}}
		err := newDeliverer(q, func() (webhook.Response, error) {
			Fail("nothing is sent for a message another worker holds")
			return webhook.Response{}, nil
		}).Deliver(context.Background(), "m1")
		var held jobs.HeldError
		Expect(errors.As(err, &held)).To(BeTrue(), "%v", err)
		Expect(held.Until).To(Equal(until))
		Expect(q.finished).To(BeEmpty())
	})

	It("fails a message at once when its destination is refused, with the reason", func() {
		q := claimable()
		err := newDeliverer(q, func() (webhook.Response, error) {
			return webhook.Response{}, fmt.Errorf("%w: dial 169.254.169.254:80: link-local address", webhook.ErrRefusedDestination)
		}).Deliver(context.Background(), "m1")
		Expect(err).NotTo(HaveOccurred())
		Expect(q.finished).To(HaveLen(1))
		Expect(q.finished[0].Status).To(Equal(webhook.StatusFailed))
		Expect(q.finished[0].NextAttemptAt).To(BeNil())
		Expect(*q.finished[0].Attempt.ErrorMessage).To(Equal("The server's address is not allowed."))
	})

	It("logs a failed send by its reason, never by the error's text with the address", func() {
		for err, want := range map[error]string{
			&webhook.SendError{Reason: "connection refused", Err: errors.New("dial tcp 10.1.2.3:80: connect: connection refused")}: "connection refused",
			errors.New("dial tcp 10.1.2.3:80: connect: no route to host"):                                                          "The delivery failed.",
		} {
			q := claimable()
			Expect(newDeliverer(q, func() (webhook.Response, error) { return webhook.Response{}, err }).Deliver(context.Background(), "m1")).To(Succeed())
			Expect(q.finished).To(HaveLen(1))
			Expect(*q.finished[0].Attempt.ErrorMessage).To(Equal(want))
		}
	})

	It("still retries a destination that does not answer", func() {
		q := claimable()
		Expect(newDeliverer(q, func() (webhook.Response, error) {
			return webhook.Response{}, errors.New("dial tcp: connection refused")
		}).Deliver(context.Background(), "m1")).To(Succeed())
		Expect(q.finished).To(HaveLen(1))
		Expect(q.finished[0].Status).To(Equal(webhook.StatusScheduled))
	})
})
