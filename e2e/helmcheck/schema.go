package helmcheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// SchemaValidator validates manifests against the OpenAPI v3 schemas a Kubernetes release
// publishes (api/openapi-spec/v3 of the k8s.io/kubernetes module), the way the API server's
// strict field validation would: an unknown field, a value of the wrong type, a missing required
// field or a kind the release does not serve is an error. The published schemas allow unknown
// fields, so every object schema that lists its properties is closed first (as kubeconform's
// -strict does), except where Kubernetes keeps unknown fields (x-kubernetes-preserve-unknown-fields).
type SchemaValidator struct {
	dir string
	// kinds maps "apiVersion kind" to its schema, filled one API group version at a time.
	kinds map[string]*openapi3.SchemaRef
	// loaded records the API group versions whose file has been read.
	loaded map[string]bool
}

// NewSchemaValidator returns a validator reading the schema files in dir, which must hold
// api__v1_openapi.json and the apis__<group>__<version>_openapi.json files.
func NewSchemaValidator(dir string) (*SchemaValidator, error) {
	if _, err := os.Stat(filepath.Join(dir, "api__v1_openapi.json")); err != nil {
		return nil, fmt.Errorf("helmcheck: Kubernetes OpenAPI schemas: %w", err)
	}
	return &SchemaValidator{dir: dir, kinds: map[string]*openapi3.SchemaRef{}, loaded: map[string]bool{}}, nil
}

// schemaFile names the file that holds apiVersion's schemas: "v1" is api__v1_openapi.json,
// "apps/v1" is apis__apps__v1_openapi.json.
func schemaFile(apiVersion string) string {
	group, version, found := strings.Cut(apiVersion, "/")
	if !found {
		return "api__" + apiVersion + "_openapi.json"
	}
	return "apis__" + group + "__" + version + "_openapi.json"
}

// load reads apiVersion's schema file once and indexes its kinds. A group version the release
// does not serve leaves no kind behind, which Validate reports.
func (v *SchemaValidator) load(apiVersion string) error {
	if v.loaded[apiVersion] {
		return nil
	}
	v.loaded[apiVersion] = true
	raw, err := os.ReadFile(filepath.Join(v.dir, schemaFile(apiVersion)))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("helmcheck: %w", err)
	}
	// Only the components matter; the paths would triple the time the loader takes.
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("helmcheck: %s: %w", schemaFile(apiVersion), err)
	}
	doc["paths"] = json.RawMessage("{}")
	if raw, err = json.Marshal(doc); err != nil {
		return fmt.Errorf("helmcheck: %s: %w", schemaFile(apiVersion), err)
	}
	spec, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return fmt.Errorf("helmcheck: %s: %w", schemaFile(apiVersion), err)
	}
	closed := map[*openapi3.Schema]bool{}
	for _, ref := range spec.Components.Schemas {
		closeSchema(ref, closed)
		gvks, _ := ref.Value.Extensions["x-kubernetes-group-version-kind"].([]any)
		for _, gvk := range gvks {
			m, _ := gvk.(map[string]any)
			group, _ := m["group"].(string)
			version, _ := m["version"].(string)
			kind, _ := m["kind"].(string)
			if group != "" {
				version = group + "/" + version
			}
			if version == apiVersion {
				v.kinds[apiVersion+" "+kind] = ref
			}
		}
	}
	return nil
}

// closeSchema forbids properties a schema does not list, in ref and every schema it reaches.
func closeSchema(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	preserve, _ := s.Extensions["x-kubernetes-preserve-unknown-fields"].(bool)
	if len(s.Properties) > 0 && !preserve && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
		closed := false
		s.AdditionalProperties.Has = &closed
	}
	for _, p := range s.Properties {
		closeSchema(p, seen)
	}
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, r := range list {
			closeSchema(r, seen)
		}
	}
	closeSchema(s.Items, seen)
	closeSchema(s.AdditionalProperties.Schema, seen)
}

// Validate validates one YAML document. A document that holds only comments is valid. The
// error lists every violation.
func (v *SchemaValidator) Validate(doc []byte) error {
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return fmt.Errorf("yaml: %w", err)
	}
	var value any
	if err := json.Unmarshal(data, &value); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	if value == nil {
		return nil
	}
	object, ok := value.(map[string]any)
	if !ok {
		return fmt.Errorf("not an object but %T", value)
	}
	apiVersion, _ := object["apiVersion"].(string)
	kind, _ := object["kind"].(string)
	if apiVersion == "" || kind == "" {
		return errors.New("no apiVersion or kind")
	}
	if err := v.load(apiVersion); err != nil {
		return err
	}
	schema, ok := v.kinds[apiVersion+" "+kind]
	if !ok {
		return fmt.Errorf("%s %s: no such kind in the Kubernetes schemas of %s", apiVersion, kind, v.dir)
	}
	if err := schema.Value.VisitJSON(value, openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	return nil
}

// ValidateFile validates every document of a multi-document YAML file and returns how many
// objects it validated. The error names each document that failed, as "default.yaml#3".
func (v *SchemaValidator) ValidateFile(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("helmcheck: %w", err)
	}
	defer f.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var errs []error
	validated := 0
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return validated, fmt.Errorf("helmcheck: read %s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		if err := v.Validate(doc); err != nil {
			errs = append(errs, fmt.Errorf("%s#%d: %w", filepath.Base(path), i, err))
			continue
		}
		if !commentsOnly(doc) {
			validated++
		}
	}
	return validated, errors.Join(errs...)
}

// commentsOnly reports whether doc holds nothing but comments and blank lines.
func commentsOnly(doc []byte) bool {
	for line := range strings.SplitSeq(string(doc), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return false
		}
	}
	return true
}
