// Package paging holds the page arithmetic shared by the content service's paged lists:
// page numbers from 1, a default page size of 20 and a maximum of 100.
package paging

import "github.com/motionstudio/platform/pkg/apperr"

const (
	// DefaultSize is the page size when the client gives none.
	DefaultSize = 20
	// MaxSize is the largest page size a client may ask for.
	MaxSize = 100
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
// Invalid error naming the field when a value is out of range.
func New(page, size *int) (Page, error) {
	p := Page{Number: 1, Size: DefaultSize}
	if page != nil {
		if *page < 1 {
			return p, apperr.E(apperr.Invalid, "invalid_page", "page must be at least 1").
				WithFields(apperr.FieldError{Field: "page", Message: "must be at least 1"})
		}
		p.Number = *page
	}
	if size != nil {
		if *size < 1 || *size > MaxSize {
			return p, apperr.E(apperr.Invalid, "invalid_page_size", "page_size must be between 1 and 100").
				WithFields(apperr.FieldError{Field: "page_size", Message: "must be between 1 and 100"})
		}
		p.Size = *size
	}
	return p, nil
}

// Offset is the number of rows before the page.
func (p Page) Offset() int { return (p.Number - 1) * p.Size }

// Meta describes p for a list of total rows.
func (p Page) Meta(total int) Meta {
	return Meta{Page: p.Number, PageSize: p.Size, Total: total, HasMore: p.Offset()+p.Size < total}
}
