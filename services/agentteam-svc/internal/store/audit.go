package store

import (
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
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
		ID: uuid.Must(uuid.NewV7()).String(), OrganizationID: e.OrganizationID, Action: e.Action, EntityType: e.EntityType,
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
