package memory

import (
	"context"
	"fmt"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// Approve reviews a completed run (WorkTasks on its team): with no edited output, or one equal
// to the run's output, it stores an Approval entry holding the output; otherwise a Correction
// holding the edited text and its edit distance from the output. It returns run.NotFound,
// Invalid for a malformed or oversized edit, Forbidden, Conflict when the run is not Completed
// or was approved before, and Unavailable when a remote embedder fails.
func (s *Service) Approve(ctx context.Context, memberID, runID string, edited *string) (Entry, error) {
	var c check.Checker
	c.Text("editedOutput", edited, check.TextMax)
	if err := c.First(); err != nil {
		return Entry{}, err
	}
	r, err := s.runs.Run(ctx, runID)
	if err != nil {
		return Entry{}, err
	}
	orgID, err := s.access.Require(ctx, memberID, access.WorkTasks, access.Team(r.TeamID))
	if err != nil {
		return Entry{}, err
	}
	if r.Status != run.Completed {
		return Entry{}, apperr.E(apperr.Conflict, "run_not_completed", "Only a completed run can be approved.")
	}
	e := Entry{
		ID: s.newID(), OrganizationID: orgID, TeamID: r.TeamID, Kind: Approval, Content: r.Output,
		RunID: &r.ID, AgentID: r.AgentID, CreatedBy: memberID, CreatedAt: s.now(),
	}
	detail := "Approval"
	if edited != nil && *edited != r.Output {
		d := EditDistance(r.Output, *edited)
		e.Kind, e.Content, e.EditDistance = Correction, *edited, &d
		detail = fmt.Sprintf("Correction (edit distance %d)", d)
	}
	if check.Blank(e.Content) {
		return Entry{}, apperr.Invalidf("The approved output is empty.")
	}
	err = s.insert(ctx, e, audit.New(orgID, memberID, "run.approved", "AgentRun", r.ID, detail))
	if apperr.Is(err, apperr.Conflict) {
		return Entry{}, apperr.E(apperr.Conflict, "run_already_approved", "Run has already been approved.")
	}
	return e, err
}
