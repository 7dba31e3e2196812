// Package org holds organizations, their members and invitations: creating an organization makes
// its creator the Owner, invitations carry a role and a single-use join token, and accepting one
// makes the caller a member with that role.
package org

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
)

// Organization is a tenant of the agent-team platform.
type Organization struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// MemberOrganization is an organization seen by one of its members.
type MemberOrganization struct {
	Organization
	Role access.Role
}

// Membership is a member's role in an organization.
type Membership struct {
	OrganizationID string
	MemberID       string
	Role           access.Role
	CreatedAt      time.Time
}

// Invitation statuses.
const (
	InvitationPending  = "Pending"
	InvitationAccepted = "Accepted"
	InvitationExpired  = "Expired"
)

// Invitation invites whoever holds its join token into an organization with a role.
type Invitation struct {
	ID             string
	OrganizationID string
	Role           access.Role
	InvitedBy      string
	// JoinToken is kept only while the invitation is pending.
	JoinToken  string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	AcceptedBy *string
	AcceptedAt *time.Time
}

// Status is the invitation's state at now.
func (i Invitation) Status(now time.Time) string {
	switch {
	case i.AcceptedAt != nil:
		return InvitationAccepted
	case !now.Before(i.ExpiresAt):
		return InvitationExpired
	default:
		return InvitationPending
	}
}

// Page is a validated page of a list.
type Page struct{ Offset, Limit int }

// InvitationTTL is how long a join token can be used.
const InvitationTTL = 7 * 24 * time.Hour

// Store persists organizations, memberships and invitations; each mutation writes its audit
// entry in the same transaction.
type Store interface {
	// Organization returns NotFound for an unknown id.
	Organization(ctx context.Context, id string) (Organization, error)
	// CreateOrganization inserts the organization and its owner's membership; a Conflict error
	// means the id was taken meanwhile.
	CreateOrganization(ctx context.Context, o Organization, owner Membership, e audit.Entry) error
	RenameOrganization(ctx context.Context, id, name string, e audit.Entry) (Organization, error)
	OrganizationsOf(ctx context.Context, memberID string, p Page) ([]MemberOrganization, error)
	Members(ctx context.Context, organizationID string, p Page) ([]Membership, error)
	CreateInvitation(ctx context.Context, inv Invitation, e audit.Entry) error
	InvitationsBy(ctx context.Context, organizationID, inviter string, p Page) ([]Invitation, error)
	// AcceptInvitation finds the pending, unexpired invitation of the token at now, calls join
	// with it, and stores the membership join returns with the invitation marked accepted. It
	// returns NotFound (InvitationNotFound) when there is no such invitation and Conflict
	// (already_member) when the member already belongs to the organization. join runs inside
	// the transaction and must not read the database.
	AcceptInvitation(ctx context.Context, joinToken string, now time.Time, join func(Invitation) (Membership, audit.Entry, error)) (Membership, error)
}

// Service implements organizations, members and invitations.
type Service struct {
	store  Store
	access *access.Checker
	newID  func() string
	now    func() time.Time
}

// NewService returns a Service.
func NewService(store Store, checker *access.Checker, newID func() string, now func() time.Time) *Service {
	return &Service{store: store, access: checker, newID: newID, now: now}
}

// Upsert creates the organization with the caller as its Owner, or renames it when it exists
// (CreateProductsAndTeams). It returns Invalid for a blank or oversized name and Forbidden.
func (s *Service) Upsert(ctx context.Context, memberID, id, name string) (Organization, error) {
	var c check.Checker
	c.AddIf(check.Blank(name), "Name", "is required")
	c.Text("Name", &name, check.NameMax)
	if err := c.First(); err != nil {
		return Organization{}, err
	}
	_, err := s.store.Organization(ctx, id)
	if apperr.Is(err, apperr.NotFound) {
		o := Organization{ID: id, Name: name, CreatedAt: s.now()}
		owner := Membership{OrganizationID: id, MemberID: memberID, Role: access.Owner, CreatedAt: o.CreatedAt}
		err = s.store.CreateOrganization(ctx, o, owner, audit.New(id, memberID, "organization.created", "Organization", id, name))
		if !apperr.Is(err, apperr.Conflict) {
			return o, err
		}
	} else if err != nil {
		return Organization{}, err
	}
	if _, err := s.access.Require(ctx, memberID, access.CreateProductsAndTeams, access.Org(id)); err != nil {
		return Organization{}, err
	}
	return s.store.RenameOrganization(ctx, id, name, audit.New(id, memberID, "organization.renamed", "Organization", id, name))
}

// Mine lists the caller's organizations with the caller's role.
func (s *Service) Mine(ctx context.Context, memberID string, p Page) ([]MemberOrganization, error) {
	return s.store.OrganizationsOf(ctx, memberID, p)
}

// Members lists the organization's directory (ViewBoard).
func (s *Service) Members(ctx context.Context, memberID, organizationID string, p Page) ([]Membership, error) {
	if _, err := s.access.Require(ctx, memberID, access.ViewBoard, access.Org(organizationID)); err != nil {
		return nil, err
	}
	return s.store.Members(ctx, organizationID, p)
}

// Invite creates an invitation with a fresh join token (owner-level). It returns Invalid for an
// unknown role and Forbidden.
func (s *Service) Invite(ctx context.Context, memberID, organizationID string, role access.Role) (Invitation, error) {
	if !role.Valid() {
		return Invitation{}, apperr.Invalidf("role must be Owner, TeamOwner or Member.")
	}
	if _, err := s.access.Require(ctx, memberID, access.OwnerLevel, access.Org(organizationID)); err != nil {
		return Invitation{}, err
	}
	now := s.now()
	inv := Invitation{
		ID: s.newID(), OrganizationID: organizationID, Role: role, InvitedBy: memberID, JoinToken: "join_" + rand.Text(),
		CreatedAt: now, ExpiresAt: now.Add(InvitationTTL),
	}
	return inv, s.store.CreateInvitation(ctx, inv, audit.New(organizationID, memberID, "invitation.created", "Invitation", inv.ID, string(role)))
}

// Invitations lists the invitations the caller made in the organization (owner-level).
func (s *Service) Invitations(ctx context.Context, memberID, organizationID string, p Page) ([]Invitation, error) {
	if _, err := s.access.Require(ctx, memberID, access.OwnerLevel, access.Org(organizationID)); err != nil {
		return nil, err
	}
	return s.store.InvitationsBy(ctx, organizationID, memberID, p)
}

// Accept makes the caller a member with the invitation's role. It returns Invalid for a blank
// token, InvitationNotFound for an unknown, used or expired one, and Conflict when the caller
// already belongs to the organization.
func (s *Service) Accept(ctx context.Context, memberID, joinToken string) (Membership, error) {
	var c check.Checker
	c.AddIf(check.Blank(joinToken), "joinToken", "is required")
	c.Text("joinToken", &joinToken, check.NameMax)
	if err := c.First(); err != nil {
		return Membership{}, err
	}
	now := s.now()
	// join runs while the store holds the invitation's row and its connection: it reads nothing,
	// and an existing membership is refused by the store's insert, in the same transaction.
	return s.store.AcceptInvitation(ctx, joinToken, now, func(inv Invitation) (Membership, audit.Entry, error) {
		m := Membership{OrganizationID: inv.OrganizationID, MemberID: memberID, Role: inv.Role, CreatedAt: now}
		return m, audit.New(inv.OrganizationID, memberID, "invitation.accepted", "Invitation", inv.ID, string(inv.Role)), nil
	})
}

// InvitationNotFound answers an unknown, used or expired join token.
func InvitationNotFound() error {
	return apperr.E(apperr.NotFound, "invitation_not_found", "Invitation not found.")
}
