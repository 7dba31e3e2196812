package store

import (
	"database/sql/driver"
	"fmt"
	"strings"
)

// stringArray maps a Postgres text[] or uuid[] column onto a Go string slice through the
// array's text form, so no driver-specific type leaks out of the store.
type stringArray []string

// Value writes the array literal; nil is the empty array.
func (a stringArray) Value() (driver.Value, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String(), nil
}

// Scan reads a one-dimensional array literal such as {a,"b c",NULL}; NULL items become "".
func (a *stringArray) Scan(src any) error {
	var text string
	switch v := src.(type) {
	case nil:
		*a = nil
		return nil
	case string:
		text = v
	case []byte:
		text = string(v)
	default:
		return fmt.Errorf("store: scan %T into a string array", src)
	}
	if len(text) < 2 || text[0] != '{' || text[len(text)-1] != '}' {
		return fmt.Errorf("store: malformed array literal %q", text)
	}
	items, err := parseArrayItems(text[1 : len(text)-1])
	*a = items
	return err
}

func parseArrayItems(body string) ([]string, error) {
	out := []string{}
	if body == "" {
		return out, nil
	}
	var cur strings.Builder
	quoted, inQuotes, escaped := false, false, false
	flush := func() {
		s := cur.String()
		if !quoted && s == "NULL" {
			s = ""
		}
		out = append(out, s)
		cur.Reset()
		quoted = false
	}
	for _, r := range body {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\':
			escaped = true
		case r == '"':
			inQuotes = !inQuotes
			quoted = true
		case r == ',' && !inQuotes:
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	if inQuotes || escaped {
		return nil, fmt.Errorf("store: malformed array literal {%s}", body)
	}
	flush()
	return out, nil
}
