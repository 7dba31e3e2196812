// Package cache keeps the refresh path's reads of users and their tenants in memory while
// they are exact.
package cache

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/motionstudio/platform/pkg/bounded"
	"github.com/motionstudio/platform/pkg/pglisten"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

// Channel is the notification channel of migration 00052's triggers: "user:<id>" for an
// updated or deleted user, "tenant:<id>" for a tenant, "" for a truncation.
const Channel = "identity_accounts"

// ApplicationName names the listening connection in pg_stat_activity.
const ApplicationName = "identity-svc listener"

// DefaultMaxUsers bounds how many users an Accounts keeps by default (some 2 KB each).
const DefaultMaxUsers = 20000

// Accounts holds the users that refreshes read, with their tenants, while nothing can have
// changed them since: this process's own writes tell it at once (it is their
// store.AccountChanges), other processes' reach it through the database's notifications, and
// nothing is kept while the listener does not listen. Safe for concurrent use.
type Accounts struct {
	// users holds what UserWithTenant read, by user id.
	users *bounded.Map[string, account]
}

type account struct {
	user   auth.User
	tenant auth.Tenant
}

// NewAccounts returns Accounts keeping at most maxUsers users; 0 keeps none. It keeps nothing
// until SetLive(true).
func NewAccounts(maxUsers int) *Accounts {
	return &Accounts{users: bounded.New(bounded.Options[string, account]{Max: maxUsers, Listened: true})}
}

// Users returns users whose UserWithTenant answers through a; everything else passes through.
func (a *Accounts) Users(users auth.Users) auth.Users { return cachedUsers{Users: users, held: a} }

type cachedUsers struct {
	auth.Users
	held *Accounts
}

func (c cachedUsers) UserWithTenant(ctx context.Context, tenantID, userID string) (*auth.User, *auth.Tenant, error) {
	return c.held.userWithTenant(ctx, c.Users, tenantID, userID)
}

// NewListener returns a listener that keeps a live while it listens on Channel over its own
// connection to the database at dsn (which must not go through a transaction-pooling proxy)
// and registers its identity_accounts_cache_listening gauge and a's
// identity_accounts_cache_users gauge on reg.
func NewListener(a *Accounts, dsn string, log *slog.Logger, reg prometheus.Registerer) (*pglisten.Listener, error) {
	held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "identity_accounts_cache_users",
		Help: "Users (with their tenants) the refresh path holds in memory.",
	}, func() float64 { return float64(a.Len()) })
	if err := reg.Register(held); err != nil {
		return nil, fmt.Errorf("cache: register identity_accounts_cache_users: %w", err)
	}
	return pglisten.New(pglisten.Options{
		DSN: dsn, Channel: Channel, ApplicationName: ApplicationName,
		Gauge: prometheus.GaugeOpts{
			Name: "identity_accounts_cache_listening",
			Help: "1 while the process listens for user and tenant changes (and so keeps users read by refreshes in memory), else 0.",
		},
		Notify: a.notified,
		Live:   a.SetLive,
	}, log, reg)
}

// userWithTenant answers the user and its tenant from memory when they are held, else reads
// them through users and keeps them when nothing changed during the read. The answers are the
// caller's own copies of the structs; what their pointer fields point to is shared and must not
// be written.
func (a *Accounts) userWithTenant(ctx context.Context, users auth.Users, tenantID, userID string) (*auth.User, *auth.Tenant, error) {
	if held, ok := a.users.Get(userID); ok && held.user.TenantID == tenantID {
		u, tn := held.user, held.tenant
		return &u, &tn, nil
	}
	t := a.users.Ticket()
	u, tn, err := users.UserWithTenant(ctx, tenantID, userID)
	if err != nil {
		return nil, nil, err
	}
	a.users.Keep(t, userID, account{user: *u, tenant: *tn})
	return u, tn, nil
}

// UserChanged drops the user: it was updated or deleted. A read under way began before the
// change: what it gets is not kept.
func (a *Accounts) UserChanged(userID string) { a.users.Delete(userID) }

// TenantChanged drops the tenant's users: it was updated or deleted.
func (a *Accounts) TenantChanged(tenantID string) {
	a.users.DeleteFunc(func(_ string, held account) bool { return held.tenant.ID == tenantID })
}

// SetLive drops every user and says whether users may be kept from now on: true once the
// listener listens, false as soon as it lost its connection.
func (a *Accounts) SetLive(live bool) { a.users.SetLive(live) }

// notified applies one notification of Channel.
func (a *Accounts) notified(payload string) {
	if id, ok := strings.CutPrefix(payload, "user:"); ok {
		a.UserChanged(id)
		return
	}
	if id, ok := strings.CutPrefix(payload, "tenant:"); ok {
		a.TenantChanged(id)
		return
	}
	a.users.Clear()
}

// Len is how many users are held.
func (a *Accounts) Len() int { return a.users.Len() }
