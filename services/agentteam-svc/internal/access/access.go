// Package access decides who may do what in an organization: the roles a member can hold, the
// capabilities each role grants, and one check of a capability against the scope chain
// team -> organization that every operation calls.
package access

import (
	"context"
	"slices"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Role is a member's role in one organization.
type Role string

// The roles, from the most to the least privileged.
const (
	Owner     Role = "Owner"
	TeamOwner Role = "TeamOwner"
	Member    Role = "Member"
)

// Capability is one kind of action an operation needs.
type Capability string

// The capabilities.
const (
	ViewBoard              Capability = "ViewBoard"
	WorkTasks              Capability = "WorkTasks"
	CreateProductsAndTeams Capability = "CreateProductsAndTeams"
	ConfigureAgents        Capability = "ConfigureAgents"
	ManageSkills           Capability = "ManageSkills"
	ManageApiKeys          Capability = "ManageApiKeys"
)

// OwnerLevel is the capability the spec calls "owner-level": structure writes, invitations,
// performance, the audit log and product profiles.
const OwnerLevel = CreateProductsAndTeams

// grants is the one table of what each role may do.
var grants = map[Role][]Capability{
	Owner:     {ViewBoard, WorkTasks, CreateProductsAndTeams, ConfigureAgents, ManageSkills, ManageApiKeys},
	TeamOwner: {ViewBoard, WorkTasks, ConfigureAgents, ManageSkills},
	Member:    {ViewBoard, WorkTasks},
}

// Can reports whether the role grants the capability.
func (r Role) Can(c Capability) bool { return slices.Contains(grants[r], c) }

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { _, ok := grants[r]; return ok }

// Scope is where a capability is checked: a team (resolved to its organization) or an
// organization.
type Scope struct {
	OrganizationID string
	TeamID         string
}

// Org is the scope of an organization.
func Org(id string) Scope { return Scope{OrganizationID: id} }

// Team is the scope of a team, inside its organization.
func Team(id string) Scope { return Scope{TeamID: id} }

// Directory answers the membership facts the check needs.
type Directory interface {
	// RoleOf returns the member's role in the organization; ok is false when it has none.
	RoleOf(ctx context.Context, organizationID, memberID string) (role Role, ok bool, err error)
	// TeamRole returns the team's organization and the member's role there in one lookup
	// (ok false when the member has none), or a NotFound error (TeamNotFound).
	TeamRole(ctx context.Context, teamID, memberID string) (organizationID string, role Role, ok bool, err error)
}

// TeamMember is what one lookup tells of a member and a team: the team's organization, its
// board version (which changes with every write to its tasks), and the member's role in the
// organization (OK false when none).
type TeamMember struct {
	OrganizationID string
	BoardVersion   int64
	Role           Role
	OK             bool
}

// Checker checks capabilities.
type Checker struct{ dir Directory }

// NewChecker returns a Checker over dir.
func NewChecker(dir Directory) *Checker { return &Checker{dir: dir} }

// Require returns the scope's organization when the member holds the capability there. It
// returns TeamNotFound for an unknown team and Forbidden (an empty 403) when the member has no
// role in the organization or a role without the capability.
func (c *Checker) Require(ctx context.Context, memberID string, capability Capability, s Scope) (string, error) {
	org := s.OrganizationID
	var (
		role Role
		ok   bool
		err  error
	)
	if s.TeamID != "" {
		org, role, ok, err = c.dir.TeamRole(ctx, s.TeamID, memberID)
	} else {
		role, ok, err = c.dir.RoleOf(ctx, org, memberID)
	}
	if err != nil {
		return "", err
	}
	return org, Allow(role, ok, capability)
}

// Allow is the decision Require makes once it has the membership facts: nil when the member
// has a role (ok) that grants the capability, else Forbidden. An operation that reads the facts
// together with its own data in one query decides with it.
func Allow(role Role, ok bool, capability Capability) error {
	if !ok || !role.Can(capability) {
		return Forbidden()
	}
	return nil
}

// RoleOf returns the member's role in the organization; ok is false when it has none.
func (c *Checker) RoleOf(ctx context.Context, organizationID, memberID string) (Role, bool, error) {
	return c.dir.RoleOf(ctx, organizationID, memberID)
}

// Forbidden is the empty 403 every refused capability answers.
func Forbidden() error { return apperr.E(apperr.Forbidden, "", "") }

// TeamNotFound is the spec's 404 for an unknown team.
func TeamNotFound() error { return apperr.E(apperr.NotFound, "team_not_found", "Team not found.") }
