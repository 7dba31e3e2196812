// Package field holds the input rules every agent-team operation applies to client text: blank
// checks, length limits in characters, and refusal of NUL bytes and invalid UTF-8, each as a
// 400 whose plain-text message names the field.
package field

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Common limits, in characters.
const (
	NameMax  = 200
	TitleMax = 500
	TextMax  = 20000
	DocMax   = 200000
	ListMax  = 100
)

// Blank reports whether s has no visible characters.
func Blank(s string) bool { return strings.TrimSpace(s) == "" }

// Invalid is a 400 with the given plain-text message.
func Invalid(format string, args ...any) error {
	return apperr.E(apperr.Invalid, "", fmt.Sprintf(format, args...))
}

// Text checks that s is valid UTF-8 without NUL bytes and at most max characters long.
func Text(name, s string, max int) error {
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return Invalid("%s must be valid UTF-8 text without NUL bytes.", name)
	}
	if utf8.RuneCountInString(s) > max {
		return Invalid("%s must be at most %d characters.", name, max)
	}
	return nil
}

// List checks that list has at most max items, each valid text of at most itemMax characters.
func List(name string, list []string, max, itemMax int) error {
	if len(list) > max {
		return Invalid("%s must have at most %d items.", name, max)
	}
	for _, s := range list {
		if err := Text(name+" item", s, itemMax); err != nil {
			return err
		}
	}
	return nil
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
