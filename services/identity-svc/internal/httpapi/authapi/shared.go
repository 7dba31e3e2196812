package authapi

import "github.com/motionstudio/platform/services/identity-svc/internal/httpapi/wire"

// The schemas several tags answer with are generated once, in package wire (oapi-codegen.yaml
// excludes them here); the generated code of this package names them through these aliases.
type (
	User         = wire.User
	Tenant       = wire.Tenant
	TenantKind   = wire.TenantKind
	TenantStatus = wire.TenantStatus
	Problem      = wire.Problem
)
