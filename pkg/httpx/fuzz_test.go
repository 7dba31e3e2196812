package httpx_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/httpx"
)

// fuzzBodyLimit is small so that the fuzzer reaches the limit often.
const fuzzBodyLimit = 512

// fuzzBody has a field of every shape Bind walks for bad text.
type fuzzBody struct {
	Name   string            `json:"name"`
	Count  int               `json:"count"`
	Ratio  *float64          `json:"ratio"`
	Tags   []string          `json:"tags"`
	Labels map[string]string `json:"labels"`
	Inner  *struct {
		Note string `json:"note"`
	} `json:"inner"`
	Any  any    `json:"any"`
	Blob []byte `json:"blob"`
}

// cleanText reports whether every string in a decoded JSON value (keys included) is valid
// UTF-8 without NUL characters.
func cleanText(v any) bool {
	switch t := v.(type) {
	case string:
		return utf8.ValidString(t) && !strings.ContainsRune(t, 0)
	case []any:
		for _, e := range t {
			if !cleanText(e) {
				return false
			}
		}
	case map[string]any:
		for k, e := range t {
			if !cleanText(k) || !cleanText(e) {
				return false
			}
		}
	}
	return true
}

// FuzzBind sends arbitrary bodies and query strings through a real httpx server (its
// middleware, body limit and error handler) to a route that binds the body into fuzzBody and
// answers it back. It never answers 5xx; a body over the limit is a 413, with or without a
// Content-Length; a body that is not UTF-8, or a query string that does not decode or holds
// bad text, is a 400; and an accepted body is a single JSON value whose strings are all valid
// text and which the handler answers back unchanged.
func FuzzBind(f *testing.F) {
	srv, err := httpx.New(httpx.Options{
		Service: "fuzz", Config: httpx.Config{BodyLimit: fuzzBodyLimit},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		f.Fatal(err)
	}
	srv.Echo.POST("/bind", func(c echo.Context) error {
		var in fuzzBody
		if err := httpx.Bind(c, &in); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, in)
	})
	for _, s := range []string{
		`{"name":"a","count":1,"tags":["x"],"labels":{"k":"v"},"inner":{"note":"n"},"any":[1,{"a":null}],"blob":"AAE="}`,
		`{"unknown":{"deep":[1,2,3]},"name":"ok"}`,
		`{"name":"a\u0000b"}`,
		`{"labels":{"a\u0000":"v"}}`,
		`{"any":{"x":["\u0000"]}}`,
		`{"name":"\ud800"}`,
		"{\"name\":\"\xff\xfe\"}",
		"{\"name\":\"caf\xc3\"}",
		`{"count":"1"}`,
		`{"count":1e400}`,
		`{"count":9223372036854775808}`,
		`{"ratio":1e999}`,
		`{"inner":[]}`,
		`{} {}`,
		`{}x`,
		`[`,
		``,
		`null`,
		`"just a string"`,
		`{"name":"` + strings.Repeat("x", fuzzBodyLimit) + `"}`,
		`{"tags":[` + strings.Repeat(`"a",`, 200) + `"a"]}`,
	} {
		f.Add([]byte(s), "", false)
		f.Add([]byte(s), "q=%00", true)
	}
	f.Add([]byte(`{}`), "q=%ff", false)
	f.Add([]byte(`{}`), "q=%zz", false)
	f.Add([]byte(`{}`), "a=1&a=2;b", false)
	f.Fuzz(func(t *testing.T, body []byte, rawQuery string, chunked bool) {
		req := httptest.NewRequest(http.MethodPost, "/bind", bytes.NewReader(body))
		req.URL.RawQuery = rawQuery
		if chunked {
			req.ContentLength = -1
		}
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		rec := httptest.NewRecorder()
		srv.Echo.ServeHTTP(rec, req)

		status := rec.Code
		if status >= 500 {
			t.Fatalf("answered %d: %s", status, rec.Body)
		}
		query, qerr := url.ParseQuery(rawQuery)
		badQuery := qerr != nil || !cleanQuery(query)
		switch {
		case badQuery:
			if status != http.StatusBadRequest {
				t.Fatalf("query %q answered %d, want 400", rawQuery, status)
			}
			return
		case len(body) > fuzzBodyLimit:
			if status != http.StatusRequestEntityTooLarge {
				t.Fatalf("%d-byte body answered %d, want 413", len(body), status)
			}
			return
		case !utf8.Valid(body):
			if status != http.StatusBadRequest {
				t.Fatalf("invalid UTF-8 answered %d, want 400", status)
			}
			return
		case status != http.StatusOK:
			if status != http.StatusBadRequest {
				t.Fatalf("answered %d, want 200 or 400: %s", status, rec.Body)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		var sent any
		if err := dec.Decode(&sent); err != nil {
			t.Fatalf("accepted a body that is not JSON: %v", err)
		}
		if _, err := dec.Token(); err != io.EOF {
			t.Fatalf("accepted data after the JSON value")
		}
		var bound fuzzBody
		if err := json.Unmarshal(body, &bound); err != nil {
			t.Fatalf("accepted a body that does not decode into the target: %v", err)
		}
		var answered fuzzBody
		if err := json.Unmarshal(rec.Body.Bytes(), &answered); err != nil {
			t.Fatalf("answer does not decode: %v", err)
		}
		var boundTree, answeredTree any
		mustTree(t, bound, &boundTree)
		mustTree(t, answered, &answeredTree)
		if !cleanText(boundTree) {
			t.Fatalf("accepted bad text in %q", body)
		}
		if !reflect.DeepEqual(boundTree, answeredTree) {
			t.Fatalf("answered %s for %s", rec.Body, body)
		}
	})
}

// cleanQuery reports whether every decoded query name and value is valid text.
func cleanQuery(q url.Values) bool {
	for name, values := range q {
		if !cleanText(name) {
			return false
		}
		for _, v := range values {
			if !cleanText(v) {
				return false
			}
		}
	}
	return true
}

// mustTree turns v into its generic JSON form, so that values are compared as JSON sees them.
func mustTree(t *testing.T, v any, tree *any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %v: %v", v, err)
	}
	if err := json.Unmarshal(raw, tree); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
