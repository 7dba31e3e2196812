// Package cache keeps the facts the hottest reads check on every request in process memory:
// each member's role per organization, each team's organization and board version, and the
// library stamps. They are kept fresh across replicas by Postgres LISTEN/NOTIFY: triggers
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
	"sync"

	"github.com/motionstudio/platform/pkg/pglisten"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
)

// DefaultMaxEntries bounds each of the three maps; a full map starts over.
const DefaultMaxEntries = 50_000

type roleKey struct{ org, member string }

type team struct {
	org     string
	version int64
}

type stampKey struct{ kind, org string }

// Facts is the in-memory state: what is cached, whether it may be used, and the generation
// that every change and reset advances.
type Facts struct {
	mu     sync.Mutex
	gen    pglisten.Generation
	max    int
	roles  map[roleKey]string
	teams  map[string]team
	stamps map[stampKey]string
}

// New returns empty Facts holding at most max entries per map (DefaultMaxEntries when max is
// not positive). They cache nothing until SetLive(true).
func New(max int) *Facts {
	if max <= 0 {
		max = DefaultMaxEntries
	}
	f := &Facts{max: max}
	f.clear()
	return f
}

func (f *Facts) clear() {
	f.roles = make(map[roleKey]string)
	f.teams = make(map[string]team)
	f.stamps = make(map[stampKey]string)
}

// SetLive drops every entry and says whether entries may be kept from now on: true once the
// listener listens, false as soon as it lost its connection.
func (f *Facts) SetLive(live bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clear()
	f.gen.SetLive(live)
}

// Live reports whether the facts are kept.
func (f *Facts) Live() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen.Live()
}

// ticket is taken before a database read: what was read is kept only when the facts were live
// then and no change or reset arrived since.
func (f *Facts) ticket() pglisten.Ticket {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen.Ticket()
}

// Apply handles one notification payload (see the package comment); an unknown one drops
// everything.
func (f *Facts) Apply(payload string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen.Advance()
	what, rest, _ := strings.Cut(payload, ":")
	switch what {
	case "m":
		org, member, _ := strings.Cut(rest, ":")
		delete(f.roles, roleKey{org, member})
	case "t":
		delete(f.teams, rest)
	case "l":
		kind, scope, _ := strings.Cut(rest, ":")
		f.dropStamps(kind, scope)
	default:
		f.clear()
	}
}

// dropStamps drops the stamps a change of the kind's scope changes: the organization's, or
// every organization's for the shared scope "".
func (f *Facts) dropStamps(kind, scope string) {
	if scope != "" {
		delete(f.stamps, stampKey{kind, scope})
		return
	}
	for k := range f.stamps {
		if k.kind == kind {
			delete(f.stamps, k)
		}
	}
}

// forgetTeam drops the team's entry after a write of this process to its tasks.
func (f *Facts) forgetTeam(id string) { f.Apply("t:" + id) }

// forgetStamps drops every library stamp after a write of this process to the library.
func (f *Facts) forgetStamps() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen.Advance()
	f.stamps = make(map[stampKey]string)
}

func (f *Facts) role(org, member string) (access.Role, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.roles[roleKey{org, member}]
	return access.Role(r), ok
}

// teamRole returns the team's entry and, when cached too, the member's role there.
func (f *Facts) teamRole(id, member string) (t team, role access.Role, teamOK, roleOK bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, teamOK = f.teams[id]; teamOK {
		var r string
		r, roleOK = f.roles[roleKey{t.org, member}]
		role = access.Role(r)
	}
	return t, role, teamOK, roleOK
}

func (f *Facts) stamp(kind, org string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.stamps[stampKey{kind, org}]
	return s, ok
}

func (f *Facts) putRole(t pglisten.Ticket, org, member string, r access.Role) {
	keep(f, t, &f.roles, roleKey{org, member}, string(r))
}

func (f *Facts) putTeam(t pglisten.Ticket, id string, tm team) { keep(f, t, &f.teams, id, tm) }

func (f *Facts) putStamp(t pglisten.Ticket, kind, org, s string) {
	keep(f, t, &f.stamps, stampKey{kind, org}, s)
}

// keep stores v under k in the map m points to when a value read with t may be kept; a full
// map starts over.
func keep[K comparable, V any](f *Facts, t pglisten.Ticket, m *map[K]V, k K, v V) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.gen.Keeps(t) {
		return
	}
	if len(*m) >= f.max {
		*m = make(map[K]V)
	}
	(*m)[k] = v
}
