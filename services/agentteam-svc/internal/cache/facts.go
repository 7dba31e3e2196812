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

type roleKey struct{ org, member string }

type team struct {
	org     string
	version int64
}

// listKey is one page of a library list.
type listKey struct {
	q library.Query
	p library.Page
}

// Facts is the in-memory state: three bounded maps, each kept only while the listener listens
// and each with its own generation (a change of one never makes another's reads stale).
type Facts struct {
	roles *bounded.Map[roleKey, access.Role]
	teams *bounded.Map[string, team]
	lists *bounded.Map[listKey, []library.Item]
}

// New returns empty Facts holding at most max roles and max teams, and pages list pages; 0
// holds none, so every such lookup reads the database. They cache nothing until SetLive(true).
func New(max, pages int) *Facts {
	return &Facts{
		roles: bounded.New(bounded.Options[roleKey, access.Role]{Max: max, Listened: true}),
		teams: bounded.New(bounded.Options[string, team]{Max: max, Listened: true}),
		lists: bounded.New(bounded.Options[listKey, []library.Item]{Max: pages, Listened: true}),
	}
}

// SetLive drops every entry and says whether entries may be kept from now on: true once the
// listener listens, false as soon as it lost its connection.
func (f *Facts) SetLive(live bool) {
	f.roles.SetLive(live)
	f.teams.SetLive(live)
	f.lists.SetLive(live)
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
		// A change of a kind's shared items (scope "") shows in every organization's lists.
		kind, scope, _ := strings.Cut(rest, ":")
		f.lists.DeleteFunc(func(k listKey, _ []library.Item) bool {
			return string(k.q.Kind) == kind && (scope == "" || k.q.OrganizationID == scope)
		})
	default:
		f.roles.Clear()
		f.teams.Clear()
		f.lists.Clear()
	}
}
