// Package revocation keeps, in each process of a service, the sessions identity-svc revoked
// (logout, a revoked session, a ban, refresh-token reuse) and the tenants it suspended or
// cancelled, so that the service refuses their access tokens at once instead of until they
// expire. identity-svc publishes identity.session.revoked.v1 and
// identity.tenant.status_changed.v1 through its outbox; DenyList.Follow replays the recent ones
// at start (the list is rebuilt after a restart from JetStream, which already keeps them) and
// then follows new ones. Every process follows with its own ordered consumers: a durable
// consumer shared by a service's replicas would hand each revocation to one replica only.
package revocation

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/motionstudio/platform/pkg/natsx"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
)

// DefaultLookback is how far back Follow replays revocations when none is configured: longer
// than any access token lives (15 minutes by default), so every session whose tokens may still
// be presented is denied again after a restart.
const DefaultLookback = time.Hour

// retryDelay is the wait between attempts to follow the stream (it may not exist yet, or NATS
// may be down).
const retryDelay = time.Second

// pruneEvery is how often expired entries leave the list.
const pruneEvery = time.Minute

// DenyList is the set of revoked session ids, each kept until its access tokens expire, and of
// tenants whose tokens issued before a time are refused. It is safe for concurrent use.
type DenyList struct {
	now     func() time.Time
	mu      sync.RWMutex
	until   map[string]time.Time
	tenants map[string]tenantCutoff
}

// tenantCutoff refuses a tenant's tokens issued before notBefore, until until.
type tenantCutoff struct {
	notBefore, until time.Time
}

// NewDenyList returns an empty list.
func NewDenyList() *DenyList {
	return &DenyList{now: time.Now, until: map[string]time.Time{}, tenants: map[string]tenantCutoff{}}
}

// Deny refuses sessionID until the given time; a later time extends an earlier one.
func (d *DenyList) Deny(sessionID string, until time.Time) {
	if sessionID == "" || !until.After(d.now()) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if until.After(d.until[sessionID]) {
		d.until[sessionID] = until
	}
}

// Revoked reports whether the session's tokens are refused now.
func (d *DenyList) Revoked(sessionID string) bool {
	d.mu.RLock()
	until, ok := d.until[sessionID]
	d.mu.RUnlock()
	return ok && d.now().Before(until)
}

// DenyTenant refuses the tenant's tokens issued before notBefore until the given time (when the
// last of them has expired); a later notBefore replaces an earlier one.
func (d *DenyList) DenyTenant(tenantID string, notBefore, until time.Time) {
	if tenantID == "" || !until.After(d.now()) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.tenants[tenantID]; !ok || notBefore.After(c.notBefore) {
		d.tenants[tenantID] = tenantCutoff{notBefore: notBefore, until: until}
	}
}

// TenantRevoked reports whether the tenant's tokens issued at issuedAt are refused now. A
// token's iat has whole seconds, and so has every notBefore identity sets.
func (d *DenyList) TenantRevoked(tenantID string, issuedAt time.Time) bool {
	d.mu.RLock()
	c, ok := d.tenants[tenantID]
	d.mu.RUnlock()
	return ok && issuedAt.Before(c.notBefore) && d.now().Before(c.until)
}

// prune drops the entries whose tokens have all expired.
func (d *DenyList) prune() {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, until := range d.until {
		if !now.Before(until) {
			delete(d.until, id)
		}
	}
	for id, c := range d.tenants {
		if !now.Before(c.until) {
			delete(d.tenants, id)
		}
	}
}

// Follow fills the list from identity.session.revoked.v1 and
// identity.tenant.status_changed.v1 until ctx is done: first the events of the last lookback
// (DefaultLookback when zero), then each new one as it is published. While the stream cannot be
// read (identity has not created it yet, NATS is down) it retries every second, warning at the
// first failure rather than at every retry, and says when it follows again. It returns nil when
// ctx is done.
func (d *DenyList) Follow(ctx context.Context, bus *natsx.Bus, log *slog.Logger, lookback time.Duration) error {
	if lookback <= 0 {
		lookback = DefaultLookback
	}
	prune := time.NewTicker(pruneEvery)
	defer prune.Stop()
	var stop func()
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	retry := time.NewTimer(0)
	defer retry.Stop()
	warned := false // the first failure was logged; later ones are not
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-prune.C:
			d.prune()
		case <-retry.C:
			var err error
			if stop, err = d.subscribe(ctx, bus, log, lookback); err == nil {
				if warned {
					log.InfoContext(ctx, "revocation: following session revocations")
				}
				continue
			}
			if !warned {
				warned = true
				log.WarnContext(ctx, "revocation: cannot follow session revocations yet; retrying every second",
					slog.String("error", err.Error()))
			}
			retry.Reset(retryDelay)
		}
	}
}

// subscribe starts the ordered consumers of the session and tenant revocations since now minus
// lookback and answers the function that stops them.
func (d *DenyList) subscribe(ctx context.Context, bus *natsx.Bus, log *slog.Logger, lookback time.Duration) (func(), error) {
	start := d.now().Add(-lookback)
	var stops []func()
	stopAll := func() {
		for _, stop := range stops {
			stop()
		}
	}
	for subject, apply := range map[string]func([]byte) error{
		events.SubjectSessionRevoked:      d.applySession,
		events.SubjectTenantStatusChanged: d.applyTenant,
	} {
		cons, err := bus.JetStream().OrderedConsumer(ctx, bus.StreamName(events.StreamIdentityEvents), jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{bus.Subject(subject)},
			DeliverPolicy:  jetstream.DeliverByStartTimePolicy,
			OptStartTime:   &start,
		})
		if err != nil {
			stopAll()
			return nil, fmt.Errorf("revocation: consumer of %s: %w", subject, err)
		}
		cc, err := cons.Consume(func(m jetstream.Msg) {
			if err := apply(m.Data()); err != nil {
				log.ErrorContext(ctx, "revocation: skip undecodable event", slog.String("subject", subject), slog.String("error", err.Error()))
			}
		})
		if err != nil {
			stopAll()
			return nil, fmt.Errorf("revocation: consume %s: %w", subject, err)
		}
		stops = append(stops, cc.Stop)
	}
	return stopAll, nil
}

// applySession denies the session a SessionRevoked payload names.
func (d *DenyList) applySession(data []byte) error {
	msg, err := events.Decode(events.SubjectSessionRevoked, data)
	if err != nil {
		return err
	}
	ev, ok := msg.(*identityv1.SessionRevoked)
	if !ok || ev.GetDenyUntil() == nil {
		return fmt.Errorf("revocation: event without deny_until")
	}
	d.Deny(ev.GetSessionId(), ev.GetDenyUntil().AsTime())
	return nil
}

// applyTenant refuses the tokens a TenantStatusChanged payload cuts off; a change that cuts off
// none (a reactivation) changes nothing, so tokens issued before an earlier suspension stay
// refused.
func (d *DenyList) applyTenant(data []byte) error {
	msg, err := events.Decode(events.SubjectTenantStatusChanged, data)
	if err != nil {
		return err
	}
	ev, ok := msg.(*identityv1.TenantStatusChanged)
	if !ok {
		return fmt.Errorf("revocation: not a tenant status change")
	}
	if ev.GetTokensNotBefore() != nil && ev.GetDenyUntil() != nil {
		d.DenyTenant(ev.GetTenantId(), ev.GetTokensNotBefore().AsTime(), ev.GetDenyUntil().AsTime())
	}
	return nil
}
