package httpx

import (
	"fmt"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"go.yaml.in/yaml/v3"
)

// Policies maps every operationId of a service's OpenAPI document to the middleware that decides
// who may call it (for example a Verifier's RequireUser). It is handed to the generated
// RegisterHandlersWithOptions as OperationMiddlewares. Public operations are listed explicitly
// with Public, so that an operation nobody thought about is a start-up error, never an open door.
type Policies map[string][]echo.MiddlewareFunc

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Public marks an operation that anyone may call.
func Public() []echo.MiddlewareFunc { return []echo.MiddlewareFunc{} }

// Allow builds a policy from middleware.
func Allow(m ...echo.MiddlewareFunc) []echo.MiddlewareFunc { return m }

// Verify returns an error naming every operation of the OpenAPI document that has no policy and
// every policy that names no operation.
func (p Policies) Verify(openapiYAML []byte) error {
	// Path items also hold non-operation keys (parameters, summary, servers), so each key is
	// decoded only when it names an HTTP method.
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		return fmt.Errorf("httpx: parse openapi: %w", err)
	}
	seen := map[string]bool{}
	var missing []string
	for path, item := range doc.Paths {
		for method, node := range item {
			if !slices.Contains(httpMethods, strings.ToLower(method)) {
				continue
			}
			var op struct {
				OperationID string `yaml:"operationId"`
			}
			if err := node.Decode(&op); err != nil {
				return fmt.Errorf("httpx: parse openapi: %s %s: %w", method, path, err)
			}
			if op.OperationID == "" {
				continue
			}
			seen[op.OperationID] = true
			if _, ok := p[op.OperationID]; !ok {
				missing = append(missing, fmt.Sprintf("%s %s (%s)", strings.ToUpper(method), path, op.OperationID))
			}
		}
	}
	var unknown []string
	for id := range p {
		if !seen[id] {
			unknown = append(unknown, id)
		}
	}
	slices.Sort(missing)
	slices.Sort(unknown)
	if len(missing) > 0 || len(unknown) > 0 {
		return fmt.Errorf("httpx: operations without an access policy: %v; policies for unknown operations: %v", missing, unknown)
	}
	return nil
}

// Merge combines the policies of a service's HTTP packages (one per OpenAPI tag group); an
// operation claimed twice is an error.
func Merge(ps ...Policies) (Policies, error) {
	out := Policies{}
	for _, p := range ps {
		for id, m := range p {
			if _, dup := out[id]; dup {
				return nil, fmt.Errorf("httpx: operation %s has two policies", id)
			}
			out[id] = m
		}
	}
	return out, nil
}

// Area is one tag group's HTTP package of a service: who may call each of its operations and
// how its handlers mount on the router (the generated RegisterHandlersWithOptions, handed the
// policies as OperationMiddlewares).
type Area struct {
	Policies Policies
	Mount    func(e *echo.Echo, policies Policies)
}

// Mount merges the areas' policies, verifies that they cover exactly the operations of the
// OpenAPI document, and then mounts every area with the merged policies. It mounts nothing
// when an operation is claimed twice, has no policy, or a policy names no operation.
func Mount(e *echo.Echo, openapiYAML []byte, areas ...Area) error {
	all := make([]Policies, len(areas))
	for i, a := range areas {
		all[i] = a.Policies
	}
	policies, err := Merge(all...)
	if err != nil {
		return err
	}
	if err := policies.Verify(openapiYAML); err != nil {
		return err
	}
	for _, a := range areas {
		a.Mount(e, policies)
	}
	return nil
}
