// Package ids converts between the domain's string ids and the generated wire packages' UUID
// type, the one place every agent-team HTTP package does it.
package ids

import (
	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"
)

// Optional is the wire form of an optional id: nil stays nil.
func Optional(s *string) *openapi_types.UUID {
	if s == nil {
		return nil
	}
	u := uuid.MustParse(*s)
	return &u
}

// OptionalString is the domain form of an optional wire id: nil stays nil.
func OptionalString(u *openapi_types.UUID) *string {
	if u == nil {
		return nil
	}
	s := u.String()
	return &s
}
