// Package cache keeps the facts the hottest reads check on every request in process memory:
// each member's role per organization, each team's organization and board version, and the
// pages of library lists. They are kept fresh across replicas by Postgres LISTEN/NOTIFY: triggers
// (migration 00050) name, at the commit of any transaction that changes one of them, what
// changed, and each process's one listening connection (NewListener, a pkg/pglisten Listener)
// drops those entries. The writes of this process also drop theirs when they return, so a
// caller always reads its own writes, whatever the notification's delay. The same connection
// hears each commit of outbox rows, so the outbox relay can pass at once.
//
// Correctness does not depend on timing: every value comes from the database, and a value read
// while a change or a reset arrived is not kept (each read takes a ticket, the generation it
// started at). While the listener is not listening (before it first connects, and from the
// moment it loses its connection until it listens again) nothing is cached and every lookup
// reads the database; every entry is dropped on the loss and again on the reconnect, so a
// restart of Postgres never leaves a stale role or version in memory.
package cache

import (
	"strings"

	"github.com/motionstudio/platform/pkg/bounded"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
)

// DefaultMaxEntries bounds each of the three maps, least recently used out first.
const DefaultMaxEntries = 50_000

type roleKey struct{ org, member string }

type team struct {
	org     string
	version int64
}

// keysKey is one page of a library list; itemsKey the items of some keys of one.
type (
	keysKey struct {
		q library.Query
		p library.Page
	}
	itemsKey struct {
		q    library.Query
		keys string
	}
)

// listPages bounds the pages of library lists kept (their keys and their items).
const listPages = 2048

// Facts is the in-memory state: three bounded maps, each kept only while the listener listens
// and each with its own generation (a change of one never makes another's reads stale).
type Facts struct {
	roles *bounded.Map[roleKey, access.Role]
	teams *bounded.Map[string, team]
	keys  *bounded.Map[keysKey, []string]
	items *bounded.Map[itemsKey, []library.Item]
}

// New returns empty Facts holding at most max entries per map (DefaultMaxEntries when max is
// not positive). They cache nothing until SetLive(true).
func New(max int) *Facts {
	if max <= 0 {
		max = DefaultMaxEntries
	}
	return &Facts{
		roles: bounded.New(bounded.Options[roleKey, access.Role]{Max: max, Listened: true}),
		teams: bounded.New(bounded.Options[string, team]{Max: max, Listened: true}),
		keys:  bounded.New(bounded.Options[keysKey, []string]{Max: min(max, listPages), Listened: true}),
		items: bounded.New(bounded.Options[itemsKey, []library.Item]{Max: min(max, listPages), Listened: true}),
	}
}

// SetLive drops every entry and says whether entries may be kept from now on: true once the
// listener listens, false as soon as it lost its connection.
func (f *Facts) SetLive(live bool) {
	f.roles.SetLive(live)
	f.teams.SetLive(live)
	f.keys.SetLive(live)
	f.items.SetLive(live)
}

// Live reports whether the facts are kept.
func (f *Facts) Live() bool { return f.roles.Live() }

// Apply handles one notification payload (see the package comment); an unknown one drops
// everything.
func (f *Facts) Apply(payload string) {
	what, rest, _ := strings.Cut(payload, ":")
	switch what {
	case "m":
		org, member, _ := strings.Cut(rest, ":")
		f.roles.Delete(roleKey{org, member})
	case "t":
		f.teams.Delete(rest)
	case "l":
		kind, scope, _ := strings.Cut(rest, ":")
		f.dropLists(func(q library.Query) bool {
			return string(q.Kind) == kind && (scope == "" || q.OrganizationID == scope)
		})
	default:
		f.roles.Clear()
		f.teams.Clear()
		f.dropLists(func(library.Query) bool { return true })
	}
}

// dropLists drops the list pages of the queries drop selects.
func (f *Facts) dropLists(drop func(library.Query) bool) {
	f.keys.DeleteFunc(func(k keysKey, _ []string) bool { return drop(k.q) })
	f.items.DeleteFunc(func(k itemsKey, _ []library.Item) bool { return drop(k.q) })
}
