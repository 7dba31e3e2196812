package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// API is an HTTP client for a service under test that checks every answer against the
// service's OpenAPI document: the operation must exist, the status must be documented for it,
// and the body must match the documented schema. A service whose responses drift from its
// contract fails its own suite.
type API struct {
	base   string
	router routers.Router
	client *http.Client
}

// Response is what the client received.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into dst.
func (r Response) JSON(dst any) {
	ginkgo.GinkgoHelper()
	gomega.Expect(json.Unmarshal(r.Body, dst)).To(gomega.Succeed(), "body: %s", r.Body)
}

// NewAPI loads and validates the OpenAPI document and targets base (for example
// "http://127.0.0.1:41234").
func NewAPI(base string, openapiYAML []byte) *API {
	ginkgo.GinkgoHelper()
	doc, err := openapi3.NewLoader().LoadFromData(openapiYAML)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "load openapi")
	gomega.Expect(doc.Validate(context.Background())).To(gomega.Succeed(), "openapi document is invalid")
	doc.Servers = openapi3.Servers{{URL: base}}
	router, err := gorillamux.NewRouter(doc)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return &API{base: base, router: router, client: &http.Client{}}
}

// URL is the address of path on the API, for requests Do cannot make (streams).
func (a *API) URL(path string) string { return a.base + path }

// Do sends a request (body: nil, []byte/string sent as is, anything else as JSON), with a
// bearer token when token is not empty and extra headers as name/value pairs, and validates
// the answer against the document.
func (a *API) Do(method, path, token string, body any, header ...string) Response {
	ginkgo.GinkgoHelper()
	var raw []byte
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		var err error
		raw, err = json.Marshal(b)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
	}
	req, err := http.NewRequest(method, a.base+path, bytes.NewReader(raw))
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	if raw != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := a.client.Do(req)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	a.validate(req, raw, resp, got)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: got}
}

func (a *API) validate(req *http.Request, reqBody []byte, resp *http.Response, body []byte) {
	ginkgo.GinkgoHelper()
	// Requests are matched on a copy, since FindRoute and validation read the body.
	check := req.Clone(context.Background())
	check.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := a.router.FindRoute(check)
	if err != nil {
		// Built-in routes (/healthz, /readyz, /metrics) and deliberately unknown paths are not
		// part of the contract.
		return
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: check, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: resp.StatusCode,
		Header: resp.Header,
		Body:   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		ginkgo.Fail(fmt.Sprintf("%s %s answered %d, which its OpenAPI document does not allow: %v\nbody: %s",
			req.Method, req.URL.Path, resp.StatusCode, err, strings.TrimSpace(string(body))))
	}
}
