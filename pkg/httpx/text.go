package httpx

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/apperr"
)

// Text that no service stores: PostgreSQL refuses NUL characters and invalid UTF-8 in text
// (SQLSTATE 22021), and neither means anything in a name, a query or an identifier. Every
// service refuses them here, at the edge, as a client error.

// badText reports whether s holds a NUL character or is not valid UTF-8.
func badText(s string) bool {
	return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s)
}

func invalidText(where string) *apperr.Error {
	return apperr.E(apperr.Invalid, "invalid_text", where+" must be valid UTF-8 text without NUL characters.")
}

// refuseBadText refuses a request whose path or query string holds a NUL character or invalid
// UTF-8 once decoded, or whose query string cannot be decoded, before any route sees it.
func refuseBadText(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if badText(req.URL.Path) {
			return invalidText("The request path")
		}
		query, err := url.ParseQuery(req.URL.RawQuery)
		if err != nil {
			return apperr.Wrap(err, apperr.Invalid, "invalid_query", "The query string is not correctly encoded.")
		}
		for name, values := range query {
			if badText(name) {
				return invalidText("Query parameter names")
			}
			for _, v := range values {
				if badText(v) {
					return invalidText(fmt.Sprintf("Query parameter %q", name)).
						WithFields(apperr.FieldError{Field: name, Message: "must be valid UTF-8 text without NUL characters"})
				}
			}
		}
		return next(c)
	}
}

// checkText walks a decoded body and returns an Invalid error naming the first string (value or
// object key) that holds a NUL character; fields are named by their JSON names.
func checkText(v reflect.Value, path string) *apperr.Error {
	switch v.Kind() {
	case reflect.String:
		if badText(v.String()) {
			return textFieldError(path)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return checkText(v.Elem(), path)
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return nil
		}
		for i := range v.Len() {
			if err := checkText(v.Index(i), joinPath(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			key, valuePath := iter.Key(), path
			if key.Kind() == reflect.String {
				if badText(key.String()) {
					return textFieldError(path)
				}
				valuePath = joinPath(path, key.String())
			}
			if err := checkText(iter.Value(), valuePath); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := jsonName(f)
			if name == "-" {
				continue
			}
			fieldPath := joinPath(path, name)
			if f.Anonymous {
				fieldPath = path
			}
			if err := checkText(v.Field(i), fieldPath); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonName is the name encoding/json gives a struct field.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func textFieldError(path string) *apperr.Error {
	if path == "" {
		return invalidText("The request body")
	}
	return invalidText(fmt.Sprintf("Field %q", path)).
		WithFields(apperr.FieldError{Field: path, Message: "must be valid UTF-8 text without NUL characters"})
}
