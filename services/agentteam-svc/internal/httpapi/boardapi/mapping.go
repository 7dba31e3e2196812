package boardapi

import (
	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"
)

func mapAll[D, W any](list []D, f func(D) W) []W {
	out := make([]W, len(list))
	for i, d := range list {
		out[i] = f(d)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefList(s *[]string) []string {
	if s == nil {
		return nil
	}
	return *s
}

func optionalUUID(s *string) *openapi_types.UUID {
	if s == nil {
		return nil
	}
	u := uuid.MustParse(*s)
	return &u
}

func optionalString(u *openapi_types.UUID) *string {
	if u == nil {
		return nil
	}
	s := u.String()
	return &s
}
