package board

import (
	"context"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
)

// AssigneeFigures are one assignee's figures; AssigneeKind and AssigneeID are nil for the
// unassigned tasks.
type AssigneeFigures struct {
	AssigneeKind *string
	AssigneeID   *string
	Backlog      int
	InProgress   int
	InReview     int
	Done         int
	// WorkedHours is the time the tasks spent InProgress; an open period counts until now.
	WorkedHours float64
	// AverageCycleHours averages, over done tasks, the time from the first InProgress to the
	// last Done; nil when no done task went through InProgress.
	AverageCycleHours *float64
}

// Pending is how many of the assignee's tasks are not Done.
func (f AssigneeFigures) Pending() int { return f.Backlog + f.InProgress + f.InReview }

// Performance is the work of an organization, or of one of its teams, per assignee.
type Performance struct {
	OrganizationID    string
	TeamID            *string
	Assignees         []AssigneeFigures
	UnassignedPending int
}

// PerformanceLimit caps the assignees listed: the members and agents of an organization.
const PerformanceLimit = 1000

// Performance answers the figures per assignee, humans and AI alike (owner-level); teamID, when
// given, must be a team of the organization. It returns Forbidden and TeamNotFound.
func (s *Service) Performance(ctx context.Context, memberID, organizationID string, teamID *string) (Performance, error) {
	if _, err := s.Access.Require(ctx, memberID, access.OwnerLevel, access.Org(organizationID)); err != nil {
		return Performance{}, err
	}
	if teamID != nil {
		t, err := s.Structure.Team(ctx, *teamID)
		if err != nil {
			return Performance{}, err
		}
		if t.OrganizationID != organizationID {
			return Performance{}, access.TeamNotFound()
		}
	}
	// One more row than the limit, as the unassigned row does not count towards it.
	rows, err := s.Store.Performance(ctx, organizationID, teamID, s.Now(), PerformanceLimit+1)
	if err != nil {
		return Performance{}, err
	}
	p := Performance{OrganizationID: organizationID, TeamID: teamID, Assignees: make([]AssigneeFigures, 0, len(rows))}
	for _, r := range rows {
		if r.AssigneeID == nil {
			p.UnassignedPending = r.Pending()
			continue
		}
		if len(p.Assignees) < PerformanceLimit {
			p.Assignees = append(p.Assignees, r)
		}
	}
	return p, nil
}
