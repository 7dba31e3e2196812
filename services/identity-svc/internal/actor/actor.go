// Package actor describes who calls an identity operation and which tenants they may read and
// manage. Platform admins act on every tenant; tenant admins manage only their own tenant;
// other users read only their own tenant; service clients (gateway, other services) read every
// tenant and manage none.
package actor

// Actor is the caller of an operation, taken from its verified token.
type Actor struct {
	UserID        string
	TenantID      string
	PlatformAdmin bool
	TenantAdmin   bool
	Service       bool
}

// IsAdmin reports whether the actor administers at least its own tenant.
func (a Actor) IsAdmin() bool { return a.PlatformAdmin || a.TenantAdmin }

// CanRead reports whether the actor may read the tenant's records.
func (a Actor) CanRead(tenantID string) bool {
	return a.PlatformAdmin || a.Service || (a.UserID != "" && a.TenantID == tenantID)
}

// CanManage reports whether the actor may change the tenant's settings, keys and webhooks.
func (a Actor) CanManage(tenantID string) bool {
	return a.PlatformAdmin || (a.TenantAdmin && a.UserID != "" && a.TenantID == tenantID)
}
