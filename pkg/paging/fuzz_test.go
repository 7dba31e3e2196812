package paging_test

import (
	"testing"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/paging"
)

// FuzzNew checks the page arithmetic on any pair of integers, given or not. An accepted page
// lies within the documented bounds, is the given value or the default, and has a non-negative
// offset that does not overflow; its Meta says there is more exactly when rows follow the page.
// A refusal is a 400 naming exactly the fields out of range, and Ints agrees with New.
func FuzzNew(f *testing.F) {
	for _, s := range [][2]int{
		{1, 20}, {0, 0}, {-1, -1}, {100000, 100}, {100001, 100}, {1, 101}, {1, 0},
		{-9223372036854775808, 9223372036854775807}, {9223372036854775807, 1},
	} {
		f.Add(s[0], s[1], true, true, 0)
		f.Add(s[0], s[1], false, true, 1000)
		f.Add(s[0], s[1], true, false, -1)
	}
	f.Fuzz(func(t *testing.T, page, size int, givePage, giveSize bool, total int) {
		var pp, sp *int
		if givePage {
			pp = &page
		}
		if giveSize {
			sp = &size
		}
		p, err := paging.New(pp, sp)
		wantPage, wantSize := 1, paging.DefaultSize
		if givePage {
			wantPage = page
		}
		if giveSize {
			wantSize = size
		}
		pageBad := wantPage < 1 || wantPage > paging.MaxNumber
		sizeBad := wantSize < 1 || wantSize > paging.MaxSize
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.Invalid {
				t.Fatalf("refusal %v is not a 400", err)
			}
			named := map[string]bool{}
			for _, fe := range e.Fields {
				named[fe.Field] = true
			}
			if named["page"] != pageBad || named["page_size"] != sizeBad || len(named) != len(e.Fields) {
				t.Fatalf("page %d size %d: refusal names %v", wantPage, wantSize, e.Fields)
			}
		} else {
			if pageBad || sizeBad || p.Number != wantPage || p.Size != wantSize {
				t.Fatalf("page %d size %d accepted as %+v", wantPage, wantSize, p)
			}
			off := p.Offset()
			if off < 0 || off != (p.Number-1)*p.Size || off > (paging.MaxNumber-1)*paging.MaxSize {
				t.Fatalf("%+v has offset %d", p, off)
			}
			if m := p.Meta(total); m.HasMore != (off+p.Size < total) || m.Page != p.Number || m.PageSize != p.Size || m.Total != total {
				t.Fatalf("%+v describes %d rows as %+v", p, total, m)
			}
		}
		if givePage && page != 0 && giveSize && size != 0 {
			ip, ierr := paging.Ints(page, size)
			if (ierr == nil) != (err == nil) || (err == nil && ip != p) {
				t.Fatalf("Ints(%d, %d) = %+v, %v; New = %+v, %v", page, size, ip, ierr, p, err)
			}
		}
	})
}
