package skillapi

import (
	"github.com/google/uuid"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
)

// mapAll maps a list with one mapper.
func mapAll[T, R any](mapper func(T) R) func([]T) any {
	return func(list []T) any {
		out := make([]R, len(list))
		for i, x := range list {
			out[i] = mapper(x)
		}
		return out
	}
}

func fromAuthorRequest(r AuthorSkillRequest) library.Item {
	it := library.Item{
		Key: str(r.SkillKey), Name: str(r.Name), Version: str(r.Version), Summary: str(r.Summary), Inputs: str(r.Inputs),
		Outputs: str(r.Outputs), MinTier: str(r.MinTier), Body: str(r.Body),
	}
	if r.Roles != nil {
		it.Roles = *r.Roles
	}
	if r.Tools != nil {
		it.Tools = *r.Tools
	}
	if r.Context != nil {
		it.Context = *r.Context
	}
	if r.Actions != nil {
		for _, a := range *r.Actions {
			it.Actions = append(it.Actions, library.Action{Name: a.Name, Risk: a.Risk, Description: a.Description})
		}
	}
	if r.GoldenTests != nil {
		for _, t := range *r.GoldenTests {
			it.GoldenTests = append(it.GoldenTests, library.GoldenTest{Input: t.Input, Expected: t.Expected})
		}
	}
	return it
}

func orgID(it library.Item) *uuid.UUID {
	if it.Shared() {
		return nil
	}
	id := uuid.MustParse(it.OrganizationID)
	return &id
}

func list(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func toSkillSummary(it library.Item) SkillSummary {
	actions := make([]SkillAction, len(it.Actions))
	for i, a := range it.Actions {
		actions[i] = SkillAction{Name: a.Name, Risk: a.Risk, Description: a.Description}
	}
	return SkillSummary{
		Id: uuid.MustParse(it.ID), SkillKey: it.Key, Name: it.Name, Version: it.Version, Summary: it.Summary, Roles: list(it.Roles),
		Visibility: LibraryVisibility(it.Visibility), MinTier: it.MinTier, Status: LibraryStatus(it.Status),
		Origin: LibraryOrigin(it.Origin), OrganizationId: orgID(it), GoldenTestCount: len(it.GoldenTests), Actions: actions,
	}
}

func goldenTests(it library.Item) []GoldenTest {
	out := make([]GoldenTest, len(it.GoldenTests))
	for i, t := range it.GoldenTests {
		out[i] = GoldenTest{Input: t.Input, Expected: t.Expected}
	}
	return out
}

func toSkill(it library.Item) Skill {
	s := toSkillSummary(it)
	meta := it.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	return Skill{
		Id: s.Id, SkillKey: s.SkillKey, Name: s.Name, Version: s.Version, Summary: s.Summary, Roles: s.Roles,
		Visibility: s.Visibility, MinTier: s.MinTier, Status: s.Status, Origin: s.Origin, OrganizationId: s.OrganizationId,
		GoldenTestCount: s.GoldenTestCount, Actions: s.Actions,
		Inputs: it.Inputs, Outputs: it.Outputs, Tools: list(it.Tools), Context: list(it.Context), GoldenTests: goldenTests(it),
		Body: it.Body, License: it.License, Compatibility: it.Compatibility, Metadata: meta, SourceRepo: it.Source.Repo,
		SourcePath: it.Source.Path, SourceCommit: it.Source.Commit, Warnings: list(it.Warnings),
	}
}

func toSkillListing(l library.Listing) SkillListing {
	s := toSkillSummary(l.Item)
	return SkillListing{
		Id: s.Id, SkillKey: s.SkillKey, Name: s.Name, Version: s.Version, Summary: s.Summary, Roles: s.Roles,
		Visibility: s.Visibility, MinTier: s.MinTier, Status: s.Status, Origin: s.Origin, OrganizationId: s.OrganizationId,
		GoldenTestCount: s.GoldenTestCount, Actions: s.Actions, AlreadyInLibrary: l.AlreadyInLibrary,
	}
}

func toProfileSummary(it library.Item) ProfileSummary {
	return ProfileSummary{
		Id: uuid.MustParse(it.ID), ProfileKey: it.Key, Name: it.Name, Version: it.Version, Summary: it.Summary, Roles: list(it.Roles),
		Visibility: LibraryVisibility(it.Visibility), Status: LibraryStatus(it.Status), Origin: LibraryOrigin(it.Origin),
		OrganizationId: orgID(it), GoldenTestCount: len(it.GoldenTests),
	}
}

func toProfile(it library.Item) Profile {
	s := toProfileSummary(it)
	return Profile{
		Id: s.Id, ProfileKey: s.ProfileKey, Name: s.Name, Version: s.Version, Summary: s.Summary, Roles: s.Roles,
		Visibility: s.Visibility, Status: s.Status, Origin: s.Origin, OrganizationId: s.OrganizationId,
		GoldenTestCount: s.GoldenTestCount, GoldenTests: goldenTests(it), Body: it.Body, Warnings: list(it.Warnings),
	}
}

func toProfileListing(l library.Listing) ProfileListing {
	s := toProfileSummary(l.Item)
	return ProfileListing{
		Id: s.Id, ProfileKey: s.ProfileKey, Name: s.Name, Version: s.Version, Summary: s.Summary, Roles: s.Roles,
		Visibility: s.Visibility, Status: s.Status, Origin: s.Origin, OrganizationId: s.OrganizationId,
		GoldenTestCount: s.GoldenTestCount, AlreadyInLibrary: l.AlreadyInLibrary,
	}
}

func toSyncResult(r library.SyncResult) SyncResult {
	problems := func(ps []library.Problem) []SourceProblem {
		out := make([]SourceProblem, len(ps))
		for i, p := range ps {
			out[i] = SourceProblem{Path: p.Path, Message: p.Message}
		}
		return out
	}
	return SyncResult{Repo: r.Repo, Commit: r.Commit, Indexed: r.Indexed, Withdrawn: r.Withdrawn, Problems: problems(r.Problems), Warnings: problems(r.Warnings)}
}

// one maps a single item with a mapper.
func one[R any](mapper func(library.Item) R) func(library.Item) any {
	return func(it library.Item) any { return mapper(it) }
}
