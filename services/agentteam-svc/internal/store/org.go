package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// Orgs implements org.Store and access.Directory.
type Orgs struct{ db *gorm.DB }

// NewOrgs returns an Orgs store.
func NewOrgs(db *gorm.DB) *Orgs { return &Orgs{db: db} }

type organizationModel struct {
	ID        string `gorm:"primaryKey"`
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (organizationModel) TableName() string { return "organizations" }

func (m organizationModel) toDomain() org.Organization {
	return org.Organization{ID: m.ID, Name: m.Name, CreatedAt: m.CreatedAt}
}

type membershipModel struct {
	OrganizationID string `gorm:"primaryKey"`
	MemberID       string `gorm:"primaryKey"`
	Role           string
	CreatedAt      time.Time
}

func (membershipModel) TableName() string { return "memberships" }

func (m membershipModel) toDomain() org.Membership {
	return org.Membership{OrganizationID: m.OrganizationID, MemberID: m.MemberID, Role: access.Role(m.Role), CreatedAt: m.CreatedAt}
}

type invitationModel struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	Role           string
	InvitedBy      string
	JoinToken      *string
	JoinTokenHash  []byte
	CreatedAt      time.Time
	ExpiresAt      time.Time
	AcceptedBy     *string
	AcceptedAt     *time.Time
}

func (invitationModel) TableName() string { return "invitations" }

func (m invitationModel) toDomain() org.Invitation {
	inv := org.Invitation{
		ID: m.ID, OrganizationID: m.OrganizationID, Role: access.Role(m.Role), InvitedBy: m.InvitedBy,
		CreatedAt: m.CreatedAt, ExpiresAt: m.ExpiresAt, AcceptedBy: m.AcceptedBy, AcceptedAt: m.AcceptedAt,
	}
	if m.JoinToken != nil {
		inv.JoinToken = *m.JoinToken
	}
	return inv
}

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// Organization returns NotFound for an unknown id.
func (s *Orgs) Organization(ctx context.Context, id string) (org.Organization, error) {
	var m organizationModel
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&m).Error; err != nil {
		return org.Organization{}, pgdb.Translate(err, "organization")
	}
	return m.toDomain(), nil
}

// CreateOrganization inserts the organization, its owner and the audit entry in one transaction;
// Conflict when the id exists.
func (s *Orgs) CreateOrganization(ctx context.Context, o org.Organization, owner org.Membership, e audit.Entry) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		m := organizationModel{ID: o.ID, Name: o.Name, CreatedAt: o.CreatedAt, UpdatedAt: o.CreatedAt}
		if err := tx.Create(&m).Error; err != nil {
			return pgdb.Translate(err, "organization")
		}
		if err := tx.Create(toMembershipModel(owner)).Error; err != nil {
			return pgdb.Translate(err, "membership")
		}
		return writeAudit(tx, e)
	})
}

func toMembershipModel(m org.Membership) *membershipModel {
	return &membershipModel{OrganizationID: m.OrganizationID, MemberID: m.MemberID, Role: string(m.Role), CreatedAt: m.CreatedAt}
}

// RenameOrganization sets the name and writes the audit entry in one transaction.
func (s *Orgs) RenameOrganization(ctx context.Context, id, name string, e audit.Entry) (org.Organization, error) {
	var m organizationModel
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&m).Error; err != nil {
			return pgdb.Translate(err, "organization")
		}
		m.Name, m.UpdatedAt = name, time.Now().UTC()
		if err := tx.Save(&m).Error; err != nil {
			return pgdb.Translate(err, "organization")
		}
		return writeAudit(tx, e)
	})
	return m.toDomain(), err
}

// OrganizationsOf lists the member's organizations, oldest membership first.
func (s *Orgs) OrganizationsOf(ctx context.Context, memberID string, p org.Page) ([]org.MemberOrganization, error) {
	var rows []struct {
		ID, Name, Role string
		CreatedAt      time.Time
	}
	err := s.db.WithContext(ctx).Table("memberships ms").
		Select("o.id, o.name, o.created_at, ms.role").
		Joins("JOIN organizations o ON o.id = ms.organization_id").
		Where("ms.member_id = ?", memberID).Order("ms.created_at, ms.organization_id").
		Offset(p.Offset).Limit(p.Limit).Scan(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "organization")
	}
	out := make([]org.MemberOrganization, len(rows))
	for i, r := range rows {
		out[i] = org.MemberOrganization{Organization: org.Organization{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt}, Role: access.Role(r.Role)}
	}
	return out, nil
}

// Members lists the organization's memberships, oldest first.
func (s *Orgs) Members(ctx context.Context, organizationID string, p org.Page) ([]org.Membership, error) {
	var rows []membershipModel
	err := s.db.WithContext(ctx).Where("organization_id = ?", organizationID).Order("created_at, member_id").
		Offset(p.Offset).Limit(p.Limit).Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "membership")
	}
	out := make([]org.Membership, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// CreateInvitation inserts the invitation and its audit entry in one transaction.
func (s *Orgs) CreateInvitation(ctx context.Context, inv org.Invitation, e audit.Entry) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		m := invitationModel{
			ID: inv.ID, OrganizationID: inv.OrganizationID, Role: string(inv.Role), InvitedBy: inv.InvitedBy,
			JoinToken: &inv.JoinToken, JoinTokenHash: tokenHash(inv.JoinToken), CreatedAt: inv.CreatedAt, ExpiresAt: inv.ExpiresAt,
		}
		if err := tx.Create(&m).Error; err != nil {
			return pgdb.Translate(err, "invitation")
		}
		return writeAudit(tx, e)
	})
}

// InvitationsBy lists the inviter's invitations in the organization, newest first.
func (s *Orgs) InvitationsBy(ctx context.Context, organizationID, inviter string, p org.Page) ([]org.Invitation, error) {
	var rows []invitationModel
	err := s.db.WithContext(ctx).Where("organization_id = ? AND invited_by = ?", organizationID, inviter).
		Order("created_at DESC, id DESC").Offset(p.Offset).Limit(p.Limit).Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "invitation")
	}
	out := make([]org.Invitation, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// AcceptInvitation locks the pending invitation of the token, lets join decide, and stores the
// membership, the accepted invitation (its token dropped) and the audit entry in one transaction.
func (s *Orgs) AcceptInvitation(ctx context.Context, joinToken string, now time.Time,
	join func(org.Invitation) (org.Membership, audit.Entry, error)) (org.Membership, error) {
	var member org.Membership
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var m invitationModel
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).
			Where("join_token_hash = ? AND accepted_at IS NULL AND expires_at > ?", tokenHash(joinToken), now).Take(&m).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return org.InvitationNotFound()
		}
		if err != nil {
			return pgdb.Translate(err, "invitation")
		}
		var e audit.Entry
		if member, e, err = join(m.toDomain()); err != nil {
			return err
		}
		if err := tx.Create(toMembershipModel(member)).Error; err != nil {
			if pgdb.IsUniqueViolation(err, "") {
				return apperr.Wrap(err, apperr.Conflict, "already_member", "You are already a member of this organization.")
			}
			return pgdb.Translate(err, "membership")
		}
		if err := tx.Model(&m).Updates(map[string]any{"join_token": nil, "accepted_by": member.MemberID, "accepted_at": now}).Error; err != nil {
			return pgdb.Translate(err, "invitation")
		}
		return writeAudit(tx, e)
	})
	return member, err
}

// RoleOf returns the member's role in the organization.
func (s *Orgs) RoleOf(ctx context.Context, organizationID, memberID string) (access.Role, bool, error) {
	var roles []string
	err := s.db.WithContext(ctx).Model(&membershipModel{}).
		Where("organization_id = ? AND member_id = ?", organizationID, memberID).Limit(1).Pluck("role", &roles).Error
	if err != nil || len(roles) == 0 {
		return "", false, pgdb.Translate(err, "membership")
	}
	return access.Role(roles[0]), true, nil
}

// TeamRole returns the team's organization and the member's role there in one query, or
// access.TeamNotFound.
func (s *Orgs) TeamRole(ctx context.Context, teamID, memberID string) (string, access.Role, bool, error) {
	t, err := s.TeamMember(ctx, teamID, memberID)
	return t.OrganizationID, t.Role, t.OK, err
}

// TeamMember returns, in one query, the team's organization and board version with the
// member's role there, or access.TeamNotFound.
func (s *Orgs) TeamMember(ctx context.Context, teamID, memberID string) (access.TeamMember, error) {
	var rows []struct {
		OrganizationID string
		BoardVersion   int64
		Role           *string
	}
	err := s.db.WithContext(ctx).Raw(`SELECT t.organization_id::text AS organization_id, t.board_version, m.role
		FROM teams t LEFT JOIN memberships m ON m.organization_id = t.organization_id AND m.member_id = ?
		WHERE t.id = ?`, memberID, teamID).Scan(&rows).Error
	if err != nil {
		return access.TeamMember{}, pgdb.Translate(err, "team")
	}
	if len(rows) == 0 {
		return access.TeamMember{}, access.TeamNotFound()
	}
	t := access.TeamMember{OrganizationID: rows[0].OrganizationID, BoardVersion: rows[0].BoardVersion}
	if rows[0].Role != nil {
		t.Role, t.OK = access.Role(*rows[0].Role), true
	}
	return t, nil
}
