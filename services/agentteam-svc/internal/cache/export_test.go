package cache

import (
	"context"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
)

// BoardVersion returns the team's board version as the facts hold it (the key of Board's
// pages) and the member's role in its organization (ok false when none), or
// access.TeamNotFound: what a board read's access check reads, with the version the specs
// watch.
func (d *Directory) BoardVersion(ctx context.Context, teamID, memberID string) (int64, access.Role, bool, error) {
	tm, err := d.teamMember(ctx, teamID, memberID)
	return tm.BoardVersion, tm.Role, tm.OK, err
}
