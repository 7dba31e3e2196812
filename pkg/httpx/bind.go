package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Bind decodes the request's JSON body into dst. Unknown fields are ignored. It returns an
// apperr Invalid error for an empty body, a body that is not UTF-8, malformed JSON, a value of
// the wrong type (naming the field), a string holding a NUL character (naming the field) or
// data after the JSON value, and an apperr TooLarge error when the body exceeds the server's
// limit.
func Bind(c echo.Context, dst any) error {
	return bind(c, dst, false)
}

// BindOptional is Bind for an endpoint whose body may be left out: a request without a body
// (or with an empty one) leaves dst as it is; a body that is sent is checked as Bind checks it.
func BindOptional(c echo.Context, dst any) error {
	return bind(c, dst, true)
}

// bind decodes the request's body into dst; an absent or empty body is an error unless optional.
func bind(c echo.Context, dst any, optional bool) error {
	body := c.Request().Body
	empty := apperr.E(apperr.Invalid, "invalid_body", "The request body is empty.")
	if body == nil || body == http.NoBody {
		if optional {
			return nil
		}
		return empty
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return decodeError(err)
	}
	if len(raw) == 0 {
		if optional {
			return nil
		}
		return empty
	}
	if !utf8.Valid(raw) {
		return invalidText("The request body")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apperr.Wrap(err, apperr.Invalid, "invalid_body", "The request body must contain a single JSON value.")
	}
	if err := checkText(reflect.ValueOf(dst), ""); err != nil {
		return err
	}
	return nil
}

func decodeError(err error) *apperr.Error {
	var (
		mbe     *http.MaxBytesError
		syntax  *json.SyntaxError
		typeErr *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &mbe):
		return apperr.Wrap(err, apperr.TooLarge, "", tooLarge(mbe.Limit).Message)
	case errors.Is(err, io.EOF):
		return apperr.Wrap(err, apperr.Invalid, "invalid_body", "The request body is empty.")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.Wrap(err, apperr.Invalid, "invalid_json", "The request body is not valid JSON: it ends too early.")
	case errors.As(err, &syntax):
		return apperr.Wrap(err, apperr.Invalid, "invalid_json",
			fmt.Sprintf("The request body is not valid JSON (at byte %d).", syntax.Offset))
	case errors.As(err, &typeErr):
		want := jsonTypeName(typeErr.Type)
		if typeErr.Field == "" {
			return apperr.Wrap(err, apperr.Invalid, "invalid_json",
				fmt.Sprintf("The request body must be %s.", want))
		}
		return apperr.Wrap(err, apperr.Invalid, "invalid_field",
			fmt.Sprintf("Field %q must be %s.", typeErr.Field, want)).
			WithFields(apperr.FieldError{Field: typeErr.Field, Message: "must be " + want})
	default:
		return apperr.Wrap(err, apperr.Invalid, "invalid_body", "The request body could not be read.")
	}
}

// jsonTypeName names, with its article, the JSON value that decodes into a Go type.
func jsonTypeName(t reflect.Type) string {
	if t == nil {
		return "a different value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	default:
		return "a different value"
	}
}
