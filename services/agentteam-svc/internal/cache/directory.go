package cache

import (
	"context"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
)

// Source reads membership facts from the database (store.Orgs).
type Source interface {
	// RoleOf returns the member's role in the organization; ok is false when it has none.
	RoleOf(ctx context.Context, organizationID, memberID string) (access.Role, bool, error)
	// TeamMember returns the team's organization and board version with the member's role
	// there, or access.TeamNotFound.
	TeamMember(ctx context.Context, teamID, memberID string) (access.TeamMember, error)
}

// Directory implements access.Directory and board.BoardVersions from the facts, reading the
// source on a miss. Only held roles are kept: a caller without one reads the database each
// time, so a membership that appears is seen at once without being notified.
type Directory struct {
	f   *Facts
	src Source
}

// NewDirectory returns a Directory over src.
func NewDirectory(f *Facts, src Source) *Directory { return &Directory{f: f, src: src} }

// RoleOf returns the member's role in the organization; ok is false when it has none. Errors
// are the source's.
func (d *Directory) RoleOf(ctx context.Context, organizationID, memberID string) (access.Role, bool, error) {
	k := roleKey{organizationID, memberID}
	if r, ok := d.f.roles.Get(k); ok {
		return r, true, nil
	}
	t := d.f.roles.Ticket()
	r, ok, err := d.src.RoleOf(ctx, organizationID, memberID)
	if err == nil && ok {
		d.f.roles.Keep(t, k, r)
	}
	return r, ok, err
}

// TeamRole returns the team's organization and the member's role there (ok false when none),
// or access.TeamNotFound.
func (d *Directory) TeamRole(ctx context.Context, teamID, memberID string) (string, access.Role, bool, error) {
	tm, err := d.teamMember(ctx, teamID, memberID)
	return tm.OrganizationID, tm.Role, tm.OK, err
}

// BoardVersion returns the team's board version and the member's role in its organization
// (ok false when none), or access.TeamNotFound.
func (d *Directory) BoardVersion(ctx context.Context, teamID, memberID string) (int64, access.Role, bool, error) {
	tm, err := d.teamMember(ctx, teamID, memberID)
	return tm.BoardVersion, tm.Role, tm.OK, err
}

func (d *Directory) teamMember(ctx context.Context, teamID, memberID string) (access.TeamMember, error) {
	if t, ok := d.f.teams.Get(teamID); ok {
		if r, ok := d.f.roles.Get(roleKey{t.org, memberID}); ok {
			return access.TeamMember{OrganizationID: t.org, BoardVersion: t.version, Role: r, OK: true}, nil
		}
	}
	teamTicket, roleTicket := d.f.teams.Ticket(), d.f.roles.Ticket()
	tm, err := d.src.TeamMember(ctx, teamID, memberID)
	if err != nil {
		return tm, err
	}
	d.f.teams.Keep(teamTicket, teamID, team{org: tm.OrganizationID, version: tm.BoardVersion})
	if tm.OK {
		d.f.roles.Keep(roleTicket, roleKey{tm.OrganizationID, memberID}, tm.Role)
	}
	return tm, nil
}
