package cache

import (
	"strings"

	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// filter is one of the listings' filters by value: a template passes it when it has each value
// the query asks for. The index keeps, for each filter and each value (by its key), the set of
// the slots having it (index.sets). Premium, a yes or no asked either way, is index.premium.
//
// A filter is changed here (a template's values, the values a query asks for, the key they
// are compared by) and in the oracle (store/storetest), nowhere else: put, holds, prior and
// compile go through these methods, takeOut, finish and size through index.sets. A new one
// also needs its field in catalog.ListingRow or its card (read by the store's listingColumns)
// and in catalog.TemplateQuery.
type filter int

const (
	filterMode     filter = iota // the template's primary mode
	filterAspect                 // an aspect of its published projects
	filterCategory               // a category id
	filterTag                    // a tag id; a query may ask for several, each must be had
	nFilters
)

// values answers template r's values of f. It is inlined where it is called, so the mode's
// one-value slice stays on the caller's stack (holds allocates nothing: BenchmarkHoldsMillion).
func (f filter) values(r *catalog.ListingRow) []string {
	switch f {
	case filterMode:
		return []string{r.Card.PrimaryMode}
	case filterAspect:
		return r.Card.AvailableAspects
	case filterCategory:
		return r.CategoryIDs
	}
	return r.TagIDs
}

// readBack makes r's values of f those of the sets holding slot s (index.prior). The values on
// r's card are not read back here: prior decodes the card, its mode, and its aspects in their
// order, which the sets do not keep.
func (f filter) readBack(r *catalog.ListingRow, sets map[string]*entrySet, s int32) {
	switch f {
	case filterCategory:
		r.CategoryIDs = having(sets, s)
	case filterTag:
		r.TagIDs = having(sets, s)
	}
}

// asked answers the values of f that q asks for, none when it does not filter by f.
func (f filter) asked(q *catalog.TemplateQuery) []string {
	var one string
	switch f {
	case filterMode:
		one = q.Mode
	case filterAspect:
		one = q.Aspect
	case filterCategory:
		one = q.CategoryID
	default:
		return q.TagIDs
	}
	if one == "" {
		return nil
	}
	return []string{one}
}

// key answers the key value v is kept and compared by: ids lower-cased (as Postgres prints a
// uuid, so that a query's upper-case id finds it), other values as they are.
func (f filter) key(v string) string {
	if f == filterCategory || f == filterTag {
		return strings.ToLower(v) // v itself when it is lower-case already
	}
	return v
}

// having answers the values of sets that hold slot s.
func having(sets map[string]*entrySet, s int32) []string {
	var values []string
	for v, set := range sets {
		if set.has(s) {
			values = append(values, v)
		}
	}
	return values
}
