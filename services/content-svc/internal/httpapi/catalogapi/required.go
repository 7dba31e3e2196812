package catalogapi

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/httpx"
)

// bindBody decodes the JSON body into dst like httpx.Bind and answers the body's top-level
// fields as raw JSON, so that a create handler can tell a missing required field from a zero
// one, which the generated non-pointer fields cannot (PATCH bodies need no such re-read: their
// nullable fields are nullable.Nullable). It returns the errors of httpx.Bind.
func bindBody(c echo.Context, dst any) (map[string]json.RawMessage, error) {
	req := c.Request()
	var seen bytes.Buffer
	if req.Body != nil {
		req.Body = io.NopCloser(io.TeeReader(req.Body, &seen))
	}
	if err := httpx.Bind(c, dst); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(seen.Bytes(), &fields); err != nil {
		return map[string]json.RawMessage{}, nil
	}
	return fields, nil
}

// requirePresent answers apperr Invalid naming every one of names that fields lacks or sets
// to null.
func requirePresent(fields map[string]json.RawMessage, names ...string) error {
	var c check.Checker
	for _, name := range names {
		if raw, ok := fields[name]; !ok || isNull(raw) {
			c.Add(name, "is required")
		}
	}
	return c.Err()
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
