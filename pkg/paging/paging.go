// Package paging holds the page arithmetic of the platform's paged lists: page numbers from 1,
// a default page size of 20, at most 100 rows a page and at most 100,000 pages (deeper offsets
// cost the database more than any client needs).
package paging

import "github.com/motionstudio/platform/pkg/apperr"

const (
	// DefaultSize is the page size when the client gives none.
	DefaultSize = 20
	// MaxSize is the largest page size a client may ask for.
	MaxSize = 100
	// MaxNumber is the deepest page a client may ask for.
	MaxNumber = 100000
)

// Page is a validated page request.
type Page struct {
	Number int
	Size   int
}

// Meta describes the page answered.
type Meta struct {
	Page     int
	PageSize int
	Total    int
	HasMore  bool
}

// New validates the optional page number and size, filling the defaults. It returns an
// Invalid error naming every field that is out of range.
func New(page, size *int) (Page, error) {
	p := Page{Number: 1, Size: DefaultSize}
	if page != nil {
		p.Number = *page
	}
	if size != nil {
		p.Size = *size
	}
	var fields []apperr.FieldError
	if p.Number < 1 || p.Number > MaxNumber {
		fields = append(fields, apperr.FieldError{Field: "page", Message: "must be between 1 and 100000"})
	}
	if p.Size < 1 || p.Size > MaxSize {
		fields = append(fields, apperr.FieldError{Field: "page_size", Message: "must be between 1 and 100"})
	}
	if len(fields) > 0 {
		return p, apperr.E(apperr.Invalid, "invalid_paging", "the page is out of range").WithFields(fields...)
	}
	return p, nil
}

// Ints is New for callers that carry "not given" as 0; a negative value is out of range.
func Ints(page, size int) (Page, error) {
	var pp, sp *int
	if page != 0 {
		pp = &page
	}
	if size != 0 {
		sp = &size
	}
	return New(pp, sp)
}

// Offset is the number of rows before the page.
func (p Page) Offset() int { return (p.Number - 1) * p.Size }

// Meta describes p for a list of total rows.
func (p Page) Meta(total int) Meta {
	return Meta{Page: p.Number, PageSize: p.Size, Total: total, HasMore: p.Offset()+p.Size < total}
}
