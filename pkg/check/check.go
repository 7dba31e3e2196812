// Package check is the one set of input rules of every service. A Checker collects problems
// field by field; the rules are its methods, and Add and AddIf record a service's own ones.
// What a Checker answers is one apperr Invalid error carrying every problem, worded in one of
// three ways because each service's wording is part of its API: Err (content-svc: code
// invalid_field, a message naming the field), Reject (identity-svc: a code such as
// validation_failed and a message about the whole input) and First (agentteam-svc, whose errors
// are plain text: the first problem as a sentence). Invalid and Field answer one problem found
// outside a Checker.
package check

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/pkg/apperr"
)

var (
	slugPattern  = regexp.MustCompile(`^[a-z0-9]+([-_][a-z0-9]+)*$`)
	slugUnwanted = regexp.MustCompile(`[^a-z0-9]+`)
)

// Slugify derives a slug from a name: lower-case letters and digits, every other run of
// characters becoming one hyphen, cut to maxLen characters. It answers "" for a name without
// letters or digits.
func Slugify(name string, maxLen int) string {
	s := strings.Trim(slugUnwanted.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > maxLen {
		s = strings.TrimRight(s[:maxLen], "-")
	}
	return s
}

// Limits of client text, in characters, for the rules that take one.
const (
	NameMax  = 200
	TitleMax = 500
	TextMax  = 20000
	DocMax   = 200000
	ListMax  = 100
)

// Blank reports whether s has no visible characters.
func Blank(s string) bool { return strings.TrimSpace(s) == "" }

// Invalid answers the apperr Invalid error for one problem with one field, worded as Err
// words it.
func Invalid(field, msg string) error {
	var c Checker
	c.Add(field, msg)
	return c.Err()
}

// Field answers an apperr Invalid error with the given code and message about one field's
// problem.
func Field(code, message, field, msg string) error {
	return apperr.E(apperr.Invalid, code, message).WithFields(apperr.FieldError{Field: field, Message: msg})
}

// Checker collects field problems; the zero value is ready to use.
type Checker struct{ fields []apperr.FieldError }

// Add records a problem with a field.
func (c *Checker) Add(field, msg string) {
	c.fields = append(c.fields, apperr.FieldError{Field: field, Message: msg})
}

// AddIf records a problem with a field when bad is true.
func (c *Checker) AddIf(bad bool, field, msg string) {
	if bad {
		c.Add(field, msg)
	}
}

// Text checks, when an optional string is given, that it is valid UTF-8 without NUL bytes and
// at most max characters long.
func (c *Checker) Text(field string, v *string, max int) {
	switch {
	case v == nil:
	case !utf8.ValidString(*v) || strings.ContainsRune(*v, 0):
		c.Add(field, "must be valid UTF-8 text without NUL bytes")
	case utf8.RuneCountInString(*v) > max:
		c.Add(field, fmt.Sprintf("must be at most %d characters", max))
	}
}

// List checks that a list has at most max items, each text of at most itemMax characters
// (checked as "<field> item").
func (c *Checker) List(field string, list []string, max, itemMax int) {
	if len(list) > max {
		c.Add(field, fmt.Sprintf("must have at most %d items", max))
		return
	}
	for i := range list {
		c.Text(field+" item", &list[i], itemMax)
	}
}

// Required checks that a string is given, not blank, and not longer than max.
func (c *Checker) Required(field string, v *string, max int) {
	if v == nil || *v == "" {
		c.Add(field, "is required")
		return
	}
	c.Text(field, v, max)
}

// Name checks an optional string that, when given, must not be blank.
func (c *Checker) Name(field string, v *string, max int) {
	if v != nil && *v == "" {
		c.Add(field, "must not be empty")
		return
	}
	c.Text(field, v, max)
}

// Length checks that a string, trimmed, has between minLen and maxLen characters; a minLen of
// 1 or more makes it required.
func (c *Checker) Length(field, v string, minLen, maxLen int) {
	n := utf8.RuneCountInString(strings.TrimSpace(v))
	switch {
	case n < minLen:
		c.Add(field, "is required")
	case n > maxLen:
		c.Add(field, fmt.Sprintf("must be at most %d characters", maxLen))
	}
}

// Slug checks an optional slug: lower-case letters and digits, joined by single hyphens or
// underscores, at most maxLen characters.
func (c *Checker) Slug(field string, v *string, maxLen int) {
	if v == nil {
		return
	}
	if len(*v) > maxLen || !slugPattern.MatchString(*v) {
		c.Add(field, fmt.Sprintf("must be lower-case letters and digits joined by single hyphens or underscores, at most %d characters", maxLen))
	}
}

// URL checks that a string is an absolute http or https URL of at most 2000 characters; an
// empty string passes unless required.
func (c *Checker) URL(field, v string, required bool) {
	if v == "" && !required {
		return
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(v) > 2000 {
		c.Add(field, "must be an http or https URL of at most 2000 characters")
	}
}

// IDs checks an optional list of at most max uuids.
func (c *Checker) IDs(field string, v *[]string, max int) {
	if v == nil {
		return
	}
	if len(*v) > max {
		c.Add(field, fmt.Sprintf("must hold at most %d ids", max))
	}
	for _, id := range *v {
		if _, err := uuid.Parse(id); err != nil {
			c.Add(field, "must hold uuids")
			return
		}
	}
}

// Between checks an optional integer's range.
func (c *Checker) Between(field string, v *int, lo, hi int) {
	if v != nil && (*v < lo || *v > hi) {
		c.Add(field, fmt.Sprintf("must be between %d and %d", lo, hi))
	}
}

// NonNegative checks that an optional number is not negative.
func (c *Checker) NonNegative(field string, v *float64) {
	if v != nil && *v < 0 {
		c.Add(field, "must not be negative")
	}
}

// Finite checks that an optional number is neither NaN nor infinite (a query parameter may
// spell them).
func (c *Checker) Finite(field string, v *float64) {
	if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
		c.Add(field, "must be a finite number")
	}
}

// OneOf checks that an optional string is one of allowed.
func (c *Checker) OneOf(field string, v *string, allowed []string) {
	if v == nil {
		return
	}
	for _, a := range allowed {
		if *v == a {
			return
		}
	}
	c.Add(field, "must be one of "+strings.Join(allowed, ", "))
}

// Err answers an apperr Invalid error with code invalid_field naming every problem, or nil
// when there is none; the message names the field when there is one problem.
func (c *Checker) Err() error {
	if len(c.fields) == 0 {
		return nil
	}
	msg := "The request has invalid fields."
	if len(c.fields) == 1 {
		msg = fmt.Sprintf("Field %q %s.", c.fields[0].Field, c.fields[0].Message)
	}
	return apperr.E(apperr.Invalid, "invalid_field", msg).WithFields(c.fields...)
}

// Reject answers an apperr Invalid error with the given code, a message about the whole input
// and every problem, or nil when there is none.
func (c *Checker) Reject(code, message string) error {
	if len(c.fields) == 0 {
		return nil
	}
	return apperr.E(apperr.Invalid, code, message).WithFields(c.fields...)
}

// First answers an apperr Invalid error whose message is the first problem as a sentence
// ("name must be at most 200 characters."), or nil when there is none.
func (c *Checker) First() error {
	if len(c.fields) == 0 {
		return nil
	}
	f := c.fields[0]
	return apperr.Invalidf("%s %s.", f.Field, f.Message).WithFields(c.fields...)
}

// Match checks that an optional string matches re; msg says what is expected.
func (c *Checker) Match(field string, v *string, re *regexp.Regexp, msg string) {
	if v != nil && !re.MatchString(*v) {
		c.Add(field, msg)
	}
}
