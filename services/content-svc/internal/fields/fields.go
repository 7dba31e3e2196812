// Package fields holds the field rules the files and site domains share. Every rule answers
// nil or an apperr Invalid error naming the field.
package fields

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Invalid is the Invalid error for one field.
func Invalid(field, msg string) *apperr.Error {
	return apperr.E(apperr.Invalid, "invalid_"+field, field+" "+msg).
		WithFields(apperr.FieldError{Field: field, Message: msg})
}

// First returns the first non-nil error.
func First(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Text checks that v, trimmed, has between minLen and maxLen characters.
func Text(field, v string, minLen, maxLen int) error {
	n := utf8.RuneCountInString(strings.TrimSpace(v))
	if n < minLen {
		return Invalid(field, "is required")
	}
	if n > maxLen {
		return Invalid(field, fmt.Sprintf("must be at most %d characters", maxLen))
	}
	return nil
}

// OneOf checks that v is one of allowed.
func OneOf(field, v string, allowed ...string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return Invalid(field, "must be one of "+strings.Join(allowed, ", "))
}

// WebURL checks that v is an absolute http or https URL of at most 2000 characters; an empty
// v passes unless required.
func WebURL(field, v string, required bool) error {
	if v == "" && !required {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(v) > 2000 {
		return Invalid(field, "must be an http or https URL of at most 2000 characters")
	}
	return nil
}

// Slug checks that v is 1 to 120 lower-case letters, digits and single dashes.
func Slug(field, v string) error {
	ok := v != "" && len(v) <= 120 && !strings.HasPrefix(v, "-") && !strings.HasSuffix(v, "-") && !strings.Contains(v, "--")
	for _, r := range v {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			ok = false
		}
	}
	if !ok {
		return Invalid(field, "must be 1 to 120 lower-case letters, digits and single dashes")
	}
	return nil
}
