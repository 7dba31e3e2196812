package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/services/identity-svc/internal/notify"
)

// ResetJob is an accepted password-reset request waiting for RunResets: the normalized address
// it names, never a token.
type ResetJob struct {
	ID, TenantSlug, Email, Phone string
	CreatedAt                    time.Time
}

// ResetJobs keeps the accepted password-reset requests, so that a restart does not drop them.
// Next leases the oldest waiting request to owner for length (jobs.ErrNoWork when none waits);
// Renew extends and Release gives back a lease; Finish deletes the answered request. Renew and
// Finish return jobs.ErrLeaseLost when the lease no longer holds the request.
type ResetJobs interface {
	Add(ctx context.Context, j ResetJob) error
	Next(ctx context.Context, owner string, length time.Duration) (*ResetJob, jobs.Lease, error)
	Renew(ctx context.Context, l jobs.Lease) error
	Release(ctx context.Context, l jobs.Lease) error
	Finish(ctx context.Context, l jobs.Lease) error
}

// ResetLease is how long a worker holds a password-reset request between renewals; a request
// whose worker died is queued again once it lapses.
const ResetLease = time.Minute

// maxResetAttempts is how many times a password-reset request is tried before it is dropped.
const maxResetAttempts = 5

// RunResets answers the requests RequestReset queued until ctx is done: it looks each account up
// and sends the reset link when the account exists and is not banned, and deletes the request.
// It takes the requests queued by this process at once and those of other processes (or of a
// process that stopped before answering) every poll. A request that fails is given back and
// tried again, up to maxResetAttempts times. Failures are logged; it returns nil when ctx ends.
func (s *Service) RunResets(ctx context.Context, poll time.Duration) error {
	owner := s.NewID()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		for {
			ran, err := s.runReset(ctx, owner)
			if err != nil && ctx.Err() == nil {
				s.Log.ErrorContext(ctx, "auth: password reset job", slog.Any("error", err))
			}
			if !ran || ctx.Err() != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
		case <-t.C:
		}
	}
}

// runReset answers the oldest waiting request, reporting whether there was one.
func (s *Service) runReset(ctx context.Context, owner string) (bool, error) {
	j, l, err := s.Resets.Next(ctx, owner, ResetLease)
	if errors.Is(err, jobs.ErrNoWork) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	err = jobs.Keep(ctx, l, s.Resets.Renew, func(ctx context.Context) error { return s.sendReset(ctx, *j) })
	switch {
	case errors.Is(err, jobs.ErrLeaseLost):
		return true, nil
	case err != nil && (ctx.Err() != nil || l.Attempt < maxResetAttempts):
		if rerr := s.Resets.Release(context.WithoutCancel(ctx), l); rerr != nil && !errors.Is(rerr, jobs.ErrLeaseLost) {
			return true, errors.Join(err, rerr)
		}
		return true, err
	case err != nil:
		s.Log.ErrorContext(ctx, "auth: password reset dropped after its last attempt", slog.String("tenant_slug", j.TenantSlug), slog.Any("error", err))
	}
	if err := s.Resets.Finish(ctx, l); err != nil && !errors.Is(err, jobs.ErrLeaseLost) {
		return true, err
	}
	return true, nil
}

// sendReset sends the reset link of one accepted request; an unknown or banned account gets
// nothing.
func (s *Service) sendReset(ctx context.Context, r ResetJob) error {
	u, _, err := s.findAccount(ctx, r.TenantSlug, r.Email, r.Phone)
	if err != nil {
		return fmt.Errorf("auth: look up password reset account: %w", err)
	}
	if u == nil || u.Banned(s.Now()) {
		return nil
	}
	channel, target := notify.Email, r.Email
	if r.Email == "" {
		channel, target = notify.SMS, r.Phone
	}
	if err := s.sendChallenge(ctx, PurposeReset, channel, u, target, s.Messages.ResetTTL, false); err != nil {
		return fmt.Errorf("auth: send password reset to user %s: %w", u.ID, err)
	}
	return nil
}
