// Package audit defines the audit record every mutation writes in its own transaction: who did
// what to which entity of which organization.
package audit

import "time"

// Entry is one audit record.
type Entry struct {
	ID             string
	OrganizationID string
	Action         string
	EntityType     string
	EntityID       string
	MemberID       string
	Detail         string
	CreatedAt      time.Time
}

// New is an entry for an action by a member on an entity of an organization.
func New(organizationID, memberID, action, entityType, entityID, detail string) Entry {
	return Entry{OrganizationID: organizationID, MemberID: memberID, Action: action, EntityType: entityType, EntityID: entityID, Detail: detail}
}
