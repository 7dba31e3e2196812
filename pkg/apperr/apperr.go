// Package apperr defines the platform's domain error type: a kind that decides the HTTP status,
// a stable machine-readable code, a client-safe message and optional field problems. Domain
// packages return these; the HTTP edge maps them once (see httpx).
package apperr

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Kind classifies an error for transport mapping.
type Kind int

// The kinds, each mapped to one HTTP status by Status.
const (
	Internal Kind = iota
	Invalid
	Unauthenticated
	Forbidden
	NotFound
	Conflict
	Gone
	TooLarge
	Unsupported
	RateLimited
	Unavailable
)

var statuses = map[Kind]int{
	Internal:        http.StatusInternalServerError,
	Invalid:         http.StatusBadRequest,
	Unauthenticated: http.StatusUnauthorized,
	Forbidden:       http.StatusForbidden,
	NotFound:        http.StatusNotFound,
	Conflict:        http.StatusConflict,
	Gone:            http.StatusGone,
	TooLarge:        http.StatusRequestEntityTooLarge,
	Unsupported:     http.StatusUnsupportedMediaType,
	RateLimited:     http.StatusTooManyRequests,
	Unavailable:     http.StatusServiceUnavailable,
}

// Status is the HTTP status for the kind; unknown kinds are 500.
func (k Kind) Status() int {
	if s, ok := statuses[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// String is the lower-case name of the kind, used as the default code.
func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case Unauthenticated:
		return "unauthenticated"
	case Forbidden:
		return "forbidden"
	case NotFound:
		return "not_found"
	case Conflict:
		return "conflict"
	case Gone:
		return "gone"
	case TooLarge:
		return "too_large"
	case Unsupported:
		return "unsupported_media_type"
	case RateLimited:
		return "rate_limited"
	case Unavailable:
		return "unavailable"
	default:
		return "internal"
	}
}

// FieldError names one invalid input field.
type FieldError struct {
	Field   string
	Message string
}

// Error is a classified error. Message is safe to show to clients; Err (the cause) is not.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Fields  []FieldError
	// RetryAfter, when set on a RateLimited or Unavailable error, becomes a Retry-After header.
	RetryAfter time.Duration
	Err        error
}

// Error renders the message and the cause for logs.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap exposes the cause.
func (e *Error) Unwrap() error { return e.Err }

// E builds an error of the given kind; an empty code defaults to the kind's name.
func E(kind Kind, code, message string) *Error {
	if code == "" {
		code = kind.String()
	}
	return &Error{Kind: kind, Code: code, Message: message}
}

// Wrap classifies cause with kind, keeping it for errors.Is/As and logs.
func Wrap(cause error, kind Kind, code, message string) *Error {
	e := E(kind, code, message)
	e.Err = cause
	return e
}

// Invalidf is a 400 with a formatted message.
func Invalidf(format string, args ...any) *Error {
	return E(Invalid, "", fmt.Sprintf(format, args...))
}

// NotFoundf is a 404 with a formatted message.
func NotFoundf(format string, args ...any) *Error {
	return E(NotFound, "", fmt.Sprintf(format, args...))
}

// Conflictf is a 409 with a formatted message.
func Conflictf(format string, args ...any) *Error {
	return E(Conflict, "", fmt.Sprintf(format, args...))
}

// WithFields attaches field problems and returns e.
func (e *Error) WithFields(fields ...FieldError) *Error {
	e.Fields = append(e.Fields, fields...)
	return e
}

// As returns the first *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// KindOf returns the kind of the first *Error in err's chain, or Internal.
func KindOf(err error) Kind {
	if e, ok := As(err); ok {
		return e.Kind
	}
	return Internal
}

// Is reports whether err carries the given kind.
func Is(err error, kind Kind) bool {
	return err != nil && KindOf(err) == kind
}
