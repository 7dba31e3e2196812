// Package caller holds what every agent-team HTTP package reads off a request the same way: the
// caller's member id (the access token's subject) and a validated page.
package caller

import (
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// Member is the caller's member id: the user id of the access token the policy admitted.
func Member(c echo.Context) (string, error) {
	cl := authn.FromContext(c)
	if cl == nil {
		return "", apperr.E(apperr.Unauthenticated, "", "")
	}
	id, err := uuid.Parse(cl.Subject)
	if err != nil {
		return "", apperr.E(apperr.Unauthenticated, "", "the token's subject is not a member id")
	}
	return id.String(), nil
}

// DefaultPageSize is the page size of agent-team lists when the client gives none.
const DefaultPageSize = 50

// Page validates the optional page and pageSize parameters (page 1 to 100,000, size 1 to
// 100, default 50) and returns the offset and limit.
func Page(page, size *int) (offset, limit int, err error) {
	if size == nil {
		d := DefaultPageSize
		size = &d
	}
	p, err := paging.New(page, size)
	if err != nil {
		return 0, 0, apperr.E(apperr.Invalid, "invalid_paging", "page must be between 1 and 100000 and pageSize between 1 and 100.")
	}
	return p.Offset(), p.Size, nil
}

// MemberAndPage is the caller's member id and the validated page of a list operation.
func MemberAndPage(c echo.Context, page, size *int) (string, org.Page, error) {
	member, err := Member(c)
	if err != nil {
		return "", org.Page{}, err
	}
	offset, limit, err := Page(page, size)
	return member, org.Page{Offset: offset, Limit: limit}, err
}
