// Package email holds the one rule for an email address that every service applies: a bare
// addr-spec (no display name, no angle brackets, no comment), at most 254 characters with a
// local part of at most 64, compared and stored lower-cased.
package email

import (
	"net/mail"
	"strings"
)

// MaxLength is the longest address accepted, the limit of a forward path in RFC 5321.
const MaxLength = 254

// maxLocal is the longest local part accepted (RFC 5321, section 4.5.3.1.1).
const maxLocal = 64

// Message is the field message of an address the rule refuses.
const Message = "must be an email address such as ada@example.com, without a name or angle brackets"

// Normalize trims and lower-cases raw and reports whether the result is an address the rule
// accepts. The returned string is the form to store and look accounts up by.
func Normalize(raw string) (string, bool) {
	e := strings.ToLower(strings.TrimSpace(raw))
	return e, valid(e)
}

// Valid reports whether s, trimmed, is an address the rule accepts, in whatever case it is
// written.
func Valid(s string) bool {
	_, ok := Normalize(s)
	return ok
}

func valid(e string) bool {
	if e == "" || len(e) > MaxLength {
		return false
	}
	at := strings.LastIndexByte(e, '@')
	if at <= 0 || at > maxLocal {
		return false
	}
	a, err := mail.ParseAddress(e)
	return err == nil && a.Name == "" && a.Address == e
}
