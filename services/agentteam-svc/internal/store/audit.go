package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

type auditModel struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	Action         string
	EntityType     string
	EntityID       string
	MemberID       *string
	Detail         string
	CreatedAt      time.Time
}

func (auditModel) TableName() string { return "audit_records" }

func (m auditModel) toDomain() audit.Entry {
	e := audit.Entry{
		ID: m.ID, OrganizationID: m.OrganizationID, Action: m.Action, EntityType: m.EntityType, EntityID: m.EntityID,
		Detail: m.Detail, CreatedAt: m.CreatedAt,
	}
	if m.MemberID != nil {
		e.MemberID = *m.MemberID
	}
	return e
}

// writeAudit inserts the entry inside tx, the transaction of the change it records; a system
// action (no member) is stored with a null member id.
func writeAudit(tx *gorm.DB, e audit.Entry) error {
	m := auditModel{
		ID: newID(), OrganizationID: e.OrganizationID, Action: e.Action, EntityType: e.EntityType,
		EntityID: e.EntityID, Detail: e.Detail, CreatedAt: e.CreatedAt,
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now().UTC()
	}
	if e.MemberID != "" {
		m.MemberID = &e.MemberID
	}
	return pgdb.Translate(tx.Create(&m).Error, "audit record")
}

// AuditLog lists the organization's audit records, newest first.
func (s *Board) AuditLog(ctx context.Context, organizationID string, p org.Page) ([]audit.Entry, error) {
	var rows []auditModel
	err := s.db.WithContext(ctx).Where("organization_id = ?", organizationID).Order("created_at DESC, id DESC").
		Offset(p.Offset).Limit(p.Limit).Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "audit record")
	}
	return mapAll(rows, auditModel.toDomain), nil
}
