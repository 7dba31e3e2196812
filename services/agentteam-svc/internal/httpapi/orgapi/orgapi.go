// Package orgapi is agentteam-svc's HTTP adapter for organizations, members and invitations
// (tag Organizations).
package orgapi

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// Orgs is what the handlers need of the organization service.
type Orgs interface {
	Upsert(ctx context.Context, memberID, id, name string) (org.Organization, error)
	Mine(ctx context.Context, memberID string, p org.Page) ([]org.MemberOrganization, error)
	Members(ctx context.Context, memberID, organizationID string, p org.Page) ([]org.Membership, error)
	Invite(ctx context.Context, memberID, organizationID string, role access.Role) (org.Invitation, error)
	Invitations(ctx context.Context, memberID, organizationID string, p org.Page) ([]org.Invitation, error)
	Accept(ctx context.Context, memberID, joinToken string) (org.Membership, error)
}

// Handler implements ServerInterface.
type Handler struct {
	orgs Orgs
	now  func() time.Time
}

// NewHandler returns a Handler.
func NewHandler(orgs Orgs, now func() time.Time) *Handler { return &Handler{orgs: orgs, now: now} }

// Policies says who may call each operation of this package: members only, the domain checks
// their capabilities.
func Policies(v *authn.Verifier) httpx.Policies {
	user := httpx.Allow(v.RequireUser())
	return httpx.Policies{
		"upsertOrganization": user,
		"listOrganizations":  user,
		"listMembers":        user,
		"createInvitation":   user,
		"listInvitations":    user,
		"acceptInvitation":   user,
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// UpsertOrganization creates the organization or renames it.
func (h *Handler) UpsertOrganization(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req UpsertOrganizationRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	o, err := h.orgs.Upsert(c.Request().Context(), member, req.OrganizationId.String(), req.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, Organization{Id: uuid.MustParse(o.ID), Name: o.Name})
}

// ListOrganizations answers the caller's organizations with the caller's role.
func (h *Handler) ListOrganizations(c echo.Context, params ListOrganizationsParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.orgs.Mine(c.Request().Context(), member, p)
	if err != nil {
		return err
	}
	out := make([]MemberOrganization, len(list))
	for i, o := range list {
		out[i] = MemberOrganization{Id: uuid.MustParse(o.ID), Name: o.Name, Role: Role(o.Role)}
	}
	return c.JSON(http.StatusOK, out)
}

// ListMembers answers the organization's directory.
func (h *Handler) ListMembers(c echo.Context, params ListMembersParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.orgs.Members(c.Request().Context(), member, params.OrganizationId.String(), p)
	if err != nil {
		return err
	}
	out := make([]Member, len(list))
	for i, m := range list {
		out[i] = toMember(m)
	}
	return c.JSON(http.StatusOK, out)
}

// CreateInvitation invites someone with a role and answers the join token.
func (h *Handler) CreateInvitation(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req CreateInvitationRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	inv, err := h.orgs.Invite(c.Request().Context(), member, req.OrganizationId.String(), access.Role(req.Role))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.toInvitation(inv))
}

// ListInvitations answers the invitations the caller made.
func (h *Handler) ListInvitations(c echo.Context, params ListInvitationsParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.orgs.Invitations(c.Request().Context(), member, params.OrganizationId.String(), p)
	if err != nil {
		return err
	}
	out := make([]Invitation, len(list))
	for i, inv := range list {
		out[i] = h.toInvitation(inv)
	}
	return c.JSON(http.StatusOK, out)
}

// AcceptInvitation makes the caller a member with the invitation's role.
func (h *Handler) AcceptInvitation(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req AcceptInvitationRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	m, err := h.orgs.Accept(c.Request().Context(), member, req.JoinToken)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toMember(m))
}

func toMember(m org.Membership) Member {
	return Member{OrganizationId: uuid.MustParse(m.OrganizationID), MemberId: uuid.MustParse(m.MemberID), Role: Role(m.Role), JoinedAt: m.CreatedAt}
}

func (h *Handler) toInvitation(inv org.Invitation) Invitation {
	status := inv.Status(h.now())
	out := Invitation{
		Id: uuid.MustParse(inv.ID), OrganizationId: uuid.MustParse(inv.OrganizationID), Role: Role(inv.Role),
		InvitedBy: uuid.MustParse(inv.InvitedBy), Status: InvitationStatus(status), CreatedAt: inv.CreatedAt, ExpiresAt: inv.ExpiresAt,
		AcceptedAt: inv.AcceptedAt,
	}
	if status == org.InvitationPending {
		out.JoinToken = &inv.JoinToken
	}
	if inv.AcceptedBy != nil {
		id := uuid.MustParse(*inv.AcceptedBy)
		out.AcceptedBy = &id
	}
	return out
}
