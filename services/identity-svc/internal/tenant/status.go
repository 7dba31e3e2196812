package tenant

import (
	"context"
	"slices"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// CLIActor is the changed_by of a status set through the operator CLI, which has no user.
const CLIActor = "admin-cli"

// StatusChange is one status change, for the audit trail and the tenant.status_changed event.
type StatusChange struct {
	From, To string
	// By is the platform admin's user id, or CLIActor.
	By string
	At time.Time
	// TokensNotBefore and DenyUntil are set when the tenant stops working: its access tokens
	// issued before TokensNotBefore are refused until DenyUntil, when the last has expired.
	TokensNotBefore, DenyUntil *time.Time
}

// StatusHook learns of a status a platform admin set, once it is stored. It is also told when
// the status was already the one asked for, so that a retry after its failure tells it again.
type StatusHook interface {
	TenantStatusSet(ctx context.Context, t *Tenant) error
}

// StatusHookFunc is a StatusHook made of a function.
type StatusHookFunc func(ctx context.Context, t *Tenant) error

// TenantStatusSet calls f.
func (f StatusHookFunc) TenantStatusSet(ctx context.Context, t *Tenant) error { return f(ctx, t) }

// transitions lists the statuses each status may change to (ADR 0146): Active and Trial
// switch freely and may be suspended or cancelled, a suspended tenant may be reactivated or
// cancelled, and Cancelled is final.
var transitions = map[string][]string{
	StatusActive:    {StatusTrial, StatusSuspended, StatusCancelled},
	StatusTrial:     {StatusActive, StatusSuspended, StatusCancelled},
	StatusSuspended: {StatusActive, StatusTrial, StatusCancelled},
	StatusCancelled: {},
}

// validStatus reports whether s is one of the four tenant statuses.
func validStatus(s string) bool {
	_, ok := transitions[s]
	return ok
}

// statusMessage is the field problem of a status that is not one of the four.
const statusMessage = "must be Active, Trial, Suspended or Cancelled"

// statusRequiresAdmin is the apperr Forbidden error for a status change by anyone but a
// platform admin.
func statusRequiresAdmin() error {
	return apperr.E(apperr.Forbidden, "admin_required", "only a platform administrator may change a tenant's status")
}

// SetStatus changes a tenant's status as a platform admin (ADR 0145, 0146). Suspending or
// cancelling sets TokensNotBefore to the next whole second, so that every access token and
// session issued until then is refused, here and (through the event) in every service; a
// reactivation leaves it, so old sessions stay refused while the API keys work again. A
// reactivation that comes within that second waits for it, so that tokens issued after it are
// not refused. Setting the status a tenant already has changes nothing and records nothing.
// It returns apperr Forbidden for anyone but a platform admin (or the CLI), Invalid for an
// unknown status, NotFound for an unknown tenant and Conflict for a transition ADR 0146 does not
// allow (from Cancelled).
func (s *Service) SetStatus(ctx context.Context, a actor.Actor, id, status string) (*Tenant, error) {
	if !a.PlatformAdmin {
		return nil, statusRequiresAdmin()
	}
	if !validStatus(status) {
		return nil, check.Field("validation_failed", "the tenant status is invalid", "status", statusMessage)
	}
	if err := s.waitForCutoff(ctx, id, status); err != nil {
		return nil, err
	}
	by := a.UserID
	if by == "" {
		by = CLIActor
	}
	t, err := s.store.SetStatus(ctx, id, func(t *Tenant) (*StatusChange, error) {
		if t.Status == status {
			return nil, nil
		}
		if !slices.Contains(transitions[t.Status], status) {
			return nil, apperr.E(apperr.Conflict, "status_transition_refused",
				"a "+t.Status+" tenant cannot become "+status)
		}
		c := &StatusChange{From: t.Status, To: status, By: by, At: s.now()}
		t.Status = status
		if !t.Open() {
			notBefore := c.At.Truncate(time.Second).Add(time.Second)
			until := notBefore.Add(s.tokenLife)
			c.TokensNotBefore, c.DenyUntil = &notBefore, &until
			t.TokensNotBefore = &notBefore
		}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	for _, h := range s.hooks {
		if err := h.TenantStatusSet(ctx, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// waitForCutoff waits, when status reopens a tenant whose TokensNotBefore is still ahead (it
// was suspended less than a second ago), until that time, so that the tokens of logins after
// the reactivation are not refused with the old ones.
func (s *Service) waitForCutoff(ctx context.Context, id, status string) error {
	if status != StatusActive && status != StatusTrial {
		return nil
	}
	t, err := s.store.Get(ctx, id)
	if err != nil {
		return err
	}
	if t.TokensNotBefore == nil {
		return nil
	}
	if wait := t.TokensNotBefore.Sub(s.now()); wait > 0 {
		return service.Sleep(ctx, wait)
	}
	return nil
}
