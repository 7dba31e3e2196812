package memory

import (
	"context"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
)

// TrendWeeks is how many weeks, this one included, an agent's edit-distance trend covers.
const TrendWeeks = 12

// Scope is what analytics cover: an organization, or one of its teams.
type Scope struct {
	OrganizationID string
	TeamID         string
	// TrendSince is the first instant of the oldest trend week.
	TrendSince time.Time
}

// Reviews counts approvals and corrections and sums their edit distances (an approval's is 0).
type Reviews struct {
	Approvals       int
	Corrections     int
	EditDistanceSum int64
}

// Total is the number of reviews.
func (r Reviews) Total() int { return r.Approvals + r.Corrections }

// ApprovalRate is approvals / (approvals + corrections), nil without reviews.
func (r Reviews) ApprovalRate() *float64 {
	if r.Total() == 0 {
		return nil
	}
	v := float64(r.Approvals) / float64(r.Total())
	return &v
}

// AverageEditDistance is the mean edit distance over all reviews (approvals count 0), nil
// without reviews.
func (r Reviews) AverageEditDistance() *float64 {
	if r.Total() == 0 {
		return nil
	}
	v := float64(r.EditDistanceSum) / float64(r.Total())
	return &v
}

// Week is one week of an agent's reviews; Start is its Monday 00:00 UTC.
type Week struct {
	Start time.Time
	Reviews
}

// AgentFigures are one agent's runs, reviews and token use.
type AgentFigures struct {
	AgentID    string
	Runs       int
	Completed  int
	Failed     int
	TokensUsed int64
	Reviews
	// Trend holds the weeks with reviews since the scope's TrendSince, oldest first.
	Trend []Week
}

// Analytics are the governance figures of a scope.
type Analytics struct {
	Scope
	Reviews
	TasksDone  int
	TokensUsed int64
	// Agents are ordered by agent id.
	Agents []AgentFigures
}

// AnalyticsStore computes the figures of a scope with a fixed number of queries.
type AnalyticsStore interface {
	Analytics(ctx context.Context, s Scope) (Analytics, error)
}

// Analytics answers the governance figures of the organization, or of one of its teams
// (owner-level on the organization). It returns Forbidden, and TeamNotFound for a team that is
// not the organization's.
func (s *Service) Analytics(ctx context.Context, memberID, organizationID, teamID string) (Analytics, error) {
	if _, err := s.access.Require(ctx, memberID, access.OwnerLevel, access.Org(organizationID)); err != nil {
		return Analytics{}, err
	}
	if teamID != "" {
		// The caller is owner-level in the organization, so a team it may not see is another
		// organization's: as unknown as a team that does not exist.
		teamOrg, err := s.access.Require(ctx, memberID, access.OwnerLevel, access.Team(teamID))
		if apperr.Is(err, apperr.Forbidden) || (err == nil && teamOrg != organizationID) {
			return Analytics{}, access.TeamNotFound()
		}
		if err != nil {
			return Analytics{}, err
		}
	}
	return s.analytics.Analytics(ctx, Scope{OrganizationID: organizationID, TeamID: teamID, TrendSince: trendSince(s.now())})
}

// trendSince is Monday 00:00 UTC of the week TrendWeeks-1 weeks before now's.
func trendSince(now time.Time) time.Time {
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	return monday.AddDate(0, 0, -7*(TrendWeeks-1))
}
