package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// BadTextRequest is one request that carries text no service may store: a NUL character or
// invalid UTF-8 in one string field of an operation's JSON body or in one of its path or query
// parameters, everything else filled with plausible values.
type BadTextRequest struct {
	// Name says which operation and which value carry the bad text.
	Name   string
	Method string
	// Target is the escaped path and query string.
	Target string
	// Body is the JSON body, nil when the request has none.
	Body []byte
}

// The bad values: as they appear in an escaped URL and inside a JSON string.
var (
	badURLValues  = map[string]string{"NUL": "a%00b", "invalid UTF-8": "%FF%FEb"}
	badJSONValues = map[string][]byte{"NUL": []byte(`"a\u0000b"`), "invalid UTF-8": []byte("\"a\xff\xfeb\"")}
)

// badPlaceholder marks, in a marshalled body, the string that becomes the bad value.
const badPlaceholder = "\x01bad-text\x01"

// BadTextRequests walks every operation of an OpenAPI document and answers, sorted by name, the
// requests that put a NUL character and invalid UTF-8 into each path parameter, each query
// parameter and each string field (nested objects and arrays of strings included) of each
// application/json request body.
func BadTextRequests(openapiYAML []byte) []BadTextRequest {
	ginkgo.GinkgoHelper()
	doc, err := openapi3.NewLoader().LoadFromData(openapiYAML)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "load openapi")
	var out []BadTextRequest
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			out = append(out, operationBadText(method, path, append(slices.Clone(item.Parameters), op.Parameters...), op)...)
		}
	}
	slices.SortFunc(out, func(a, b BadTextRequest) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func operationBadText(method, path string, params openapi3.Parameters, op *openapi3.Operation) []BadTextRequest {
	var (
		pathParams, queryParams []*openapi3.Parameter
		out                     []BadTextRequest
	)
	for _, ref := range params {
		switch p := ref.Value; p.In {
		case openapi3.ParameterInPath:
			pathParams = append(pathParams, p)
		case openapi3.ParameterInQuery:
			queryParams = append(queryParams, p)
		}
	}
	target := func(bad *openapi3.Parameter, value string) string {
		p := path
		for _, pp := range pathParams {
			v := url.PathEscape(sampleText(pp.Schema))
			if pp == bad {
				v = value
			}
			p = strings.ReplaceAll(p, "{"+pp.Name+"}", v)
		}
		var query []string
		for _, qp := range queryParams {
			switch {
			case qp == bad:
				query = append(query, url.QueryEscape(qp.Name)+"="+value)
			case qp.Required:
				query = append(query, url.QueryEscape(qp.Name)+"="+url.QueryEscape(sampleText(qp.Schema)))
			}
		}
		if len(query) > 0 {
			p += "?" + strings.Join(query, "&")
		}
		return p
	}
	base := strings.ToUpper(method) + " " + path
	body := jsonBodySchema(op)
	var validBody []byte
	if body != nil {
		validBody, _ = json.Marshal(sampleValue(body, 0))
	}
	for _, p := range append(slices.Clone(pathParams), queryParams...) {
		for what, v := range badURLValues {
			out = append(out, BadTextRequest{
				Name:   fmt.Sprintf("%s %s parameter %s (%s)", base, p.In, p.Name, what),
				Method: strings.ToUpper(method), Target: target(p, v), Body: validBody,
			})
		}
	}
	if body == nil {
		return out
	}
	for _, field := range stringFields(body, nil, 0) {
		doc := sampleValue(body, 0)
		doc = setField(doc, body, field, badPlaceholder)
		raw, err := json.Marshal(doc)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		placeholder, _ := json.Marshal(badPlaceholder)
		for what, v := range badJSONValues {
			out = append(out, BadTextRequest{
				Name:   fmt.Sprintf("%s body %s (%s)", base, strings.Join(field, "."), what),
				Method: strings.ToUpper(method), Target: target(nil, ""),
				Body: bytes.Replace(raw, placeholder, v, 1),
			})
		}
	}
	return out
}

// jsonBodySchema is the operation's application/json request body schema, or nil.
func jsonBodySchema(op *openapi3.Operation) *openapi3.Schema {
	if op.RequestBody == nil || op.RequestBody.Value == nil {
		return nil
	}
	mt := op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return mt.Schema.Value
}

// merged folds allOf into one schema and picks the first alternative of oneOf and anyOf.
func merged(s *openapi3.Schema) *openapi3.Schema {
	if s == nil {
		return &openapi3.Schema{}
	}
	if len(s.OneOf) > 0 {
		return merged(s.OneOf[0].Value)
	}
	if len(s.AnyOf) > 0 {
		return merged(s.AnyOf[0].Value)
	}
	if len(s.AllOf) == 0 {
		return s
	}
	out := *s
	out.AllOf = nil
	out.Properties = openapi3.Schemas{}
	for name, p := range s.Properties {
		out.Properties[name] = p
	}
	for _, part := range s.AllOf {
		m := merged(part.Value)
		if out.Type == nil || out.Type.IsEmpty() {
			out.Type = m.Type
		}
		for name, p := range m.Properties {
			out.Properties[name] = p
		}
		out.Required = append(out.Required, m.Required...)
	}
	return &out
}

// stringFields lists the paths to the string values of a schema (an array element is named
// "0"), down to a few levels of nesting.
func stringFields(s *openapi3.Schema, prefix []string, depth int) [][]string {
	s = merged(s)
	if depth > 4 {
		return nil
	}
	switch {
	case s.Type.Is(openapi3.TypeString):
		return [][]string{slices.Clone(prefix)}
	case s.Type.Is(openapi3.TypeArray) && s.Items != nil:
		return stringFields(s.Items.Value, append(slices.Clone(prefix), "0"), depth+1)
	case s.Type.Is(openapi3.TypeObject) || len(s.Properties) > 0:
		var out [][]string
		for _, name := range sortedKeys(s.Properties) {
			out = append(out, stringFields(s.Properties[name].Value, append(slices.Clone(prefix), name), depth+1)...)
		}
		if ap := s.AdditionalProperties.Schema; ap != nil {
			out = append(out, stringFields(ap.Value, append(slices.Clone(prefix), "key"), depth+1)...)
		}
		return out
	}
	return nil
}

func sortedKeys(m openapi3.Schemas) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// setField sets the value at path inside doc (sampled from s), creating what is missing.
func setField(doc any, s *openapi3.Schema, path []string, value string) any {
	s = merged(s)
	if len(path) == 0 {
		return value
	}
	switch {
	case s.Type.Is(openapi3.TypeArray):
		var item *openapi3.Schema
		if s.Items != nil {
			item = s.Items.Value
		}
		arr, _ := doc.([]any)
		if len(arr) == 0 {
			arr = []any{sampleValue(item, 1)}
		}
		arr[0] = setField(arr[0], item, path[1:], value)
		return arr
	default:
		obj, ok := doc.(map[string]any)
		if !ok {
			obj = map[string]any{}
		}
		var child *openapi3.Schema
		if ref, ok := s.Properties[path[0]]; ok {
			child = ref.Value
		} else if ap := s.AdditionalProperties.Schema; ap != nil {
			child = ap.Value
		}
		cur, ok := obj[path[0]]
		if !ok {
			cur = sampleValue(child, 1)
		}
		obj[path[0]] = setField(cur, child, path[1:], value)
		return obj
	}
}

// sampleValue is a plausible value of a schema: its example, default or first enum value, else
// one made from its type and format, objects with their required properties.
func sampleValue(s *openapi3.Schema, depth int) any {
	s = merged(s)
	switch {
	case s.Example != nil:
		return s.Example
	case s.Default != nil:
		return s.Default
	case len(s.Enum) > 0:
		return s.Enum[0]
	}
	switch {
	case s.Type.Is(openapi3.TypeString):
		return sampleText(&openapi3.SchemaRef{Value: s})
	case s.Type.Is(openapi3.TypeInteger), s.Type.Is(openapi3.TypeNumber):
		if s.Min != nil && *s.Min > 1 {
			return *s.Min
		}
		return 1
	case s.Type.Is(openapi3.TypeBoolean):
		return false
	case s.Type.Is(openapi3.TypeArray):
		arr := []any{}
		if s.Items != nil && depth < 5 {
			for range s.MinItems {
				arr = append(arr, sampleValue(s.Items.Value, depth+1))
			}
		}
		return arr
	default:
		obj := map[string]any{}
		if depth < 5 {
			for _, name := range s.Required {
				if p, ok := s.Properties[name]; ok {
					obj[name] = sampleValue(p.Value, depth+1)
				}
			}
		}
		return obj
	}
}

// sampleText is a plausible value of a string-like parameter or field, as text.
func sampleText(ref *openapi3.SchemaRef) string {
	if ref == nil || ref.Value == nil {
		return "probe"
	}
	s := merged(ref.Value)
	if len(s.Enum) > 0 {
		return fmt.Sprint(s.Enum[0])
	}
	if s.Example != nil {
		return fmt.Sprint(s.Example)
	}
	switch {
	case s.Type.Is(openapi3.TypeInteger), s.Type.Is(openapi3.TypeNumber):
		return "1"
	case s.Type.Is(openapi3.TypeBoolean):
		return "false"
	}
	switch s.Format {
	case "uuid":
		return uuid.NewString()
	case "email":
		return "probe@example.com"
	case "date-time":
		return time.Now().UTC().Format(time.RFC3339)
	case "date":
		return time.Now().UTC().Format(time.DateOnly)
	case "uri", "url":
		return "https://example.com/probe"
	}
	text := "probe"
	for uint64(len(text)) < s.MinLength {
		text += "-probe"
	}
	return text
}

// Send makes the request against base with a bearer token (when not empty) and answers the
// status and body.
func (r BadTextRequest) Send(base, token string) (int, []byte) {
	ginkgo.GinkgoHelper()
	var body io.Reader = http.NoBody
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.Method, base+r.Target, body)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), r.Name)
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), r.Name)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), r.Name)
	return res.StatusCode, raw
}

// ExpectBadTextRefused sends every BadTextRequest of the document to base with the token and
// expects each to be refused with a 4xx: never accepted, never a 500. It fails once, listing
// every request answered otherwise.
func ExpectBadTextRefused(base string, openapiYAML []byte, token string) {
	ginkgo.GinkgoHelper()
	requests := BadTextRequests(openapiYAML)
	gomega.Expect(requests).NotTo(gomega.BeEmpty())
	var wrong []string
	for _, r := range requests {
		status, body := r.Send(base, token)
		if status < 400 || status >= 500 {
			wrong = append(wrong, fmt.Sprintf("%s: %d %.200s", r.Name, status, body))
		}
	}
	gomega.Expect(wrong).To(gomega.BeEmpty(), "%d of %d requests with bad text were not refused with a 4xx", len(wrong), len(requests))
}
