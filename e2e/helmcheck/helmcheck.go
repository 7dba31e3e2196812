// Package helmcheck decodes rendered Kubernetes manifests strictly into their k8s.io/api types,
// so that a chart that renders an unknown field, a value of the wrong type or an unknown kind
// fails the build before a cluster ever sees it, and validates them against the OpenAPI schemas
// of the oldest Kubernetes release the chart supports (SchemaValidator).
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
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Object is one decoded manifest.
type Object struct {
	// Source names the file and the document's position in it, as "default.yaml#3".
	Source string
	// Kind and Name identify the object, as in "Deployment/motionstudio-identity".
	Kind, Name string
	// Labels are the object's metadata labels.
	Labels map[string]string
	// Value is the typed object: *appsv1.Deployment, *corev1.Service, and so on.
	Value any
}

// ID returns "Kind/name".
func (o Object) ID() string { return o.Kind + "/" + o.Name }

// newObject returns an empty value of the Go type for apiVersion and kind, or an error for a
// kind this platform does not deploy.
func newObject(apiVersion, kind string) (any, error) {
	switch apiVersion + " " + kind {
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1 Secret":
		return &corev1.Secret{}, nil
	case "v1 Service":
		return &corev1.Service{}, nil
	case "v1 ServiceAccount":
		return &corev1.ServiceAccount{}, nil
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}, nil
	case "apps/v1 StatefulSet":
		return &appsv1.StatefulSet{}, nil
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}, nil
	case "networking.k8s.io/v1 NetworkPolicy":
		return &networkingv1.NetworkPolicy{}, nil
	case "policy/v1 PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	case "batch/v1 Job":
		return &batchv1.Job{}, nil
	case "batch/v1 CronJob":
		return &batchv1.CronJob{}, nil
	default:
		return nil, fmt.Errorf("unknown kind %q of apiVersion %q", kind, apiVersion)
	}
}

// Decode decodes one YAML document strictly into its k8s.io/api type. It returns an error when
// the document is not YAML, has duplicate keys, lacks apiVersion or kind, has an unknown kind,
// has a field the type does not know (also when only its case differs) or a value of the wrong
// type. A document that holds only comments decodes to (nil, nil).
func Decode(doc []byte) (any, error) {
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, nil
	}
	var meta metav1.TypeMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("type meta: %w", err)
	}
	if meta.APIVersion == "" || meta.Kind == "" {
		return nil, errors.New("document has no apiVersion or kind")
	}
	obj, err := newObject(meta.APIVersion, meta.Kind)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		return nil, fmt.Errorf("%s: %w", meta.Kind, err)
	}
	// encoding/json matches field names case-insensitively and keeps the last of duplicate
	// keys; the API server does neither, so decode once more the way it does.
	strict, err := newObject(meta.APIVersion, meta.Kind)
	if err != nil {
		return nil, err
	}
	strictErrs, err := kjson.UnmarshalStrict(data, strict)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", meta.Kind, err)
	}
	if len(strictErrs) > 0 {
		return nil, fmt.Errorf("%s: %w", meta.Kind, errors.Join(strictErrs...))
	}
	return obj, nil
}

// LoadFile decodes every document of a multi-document YAML file. It returns an error naming the
// document when one does not decode (see Decode).
func LoadFile(path string) ([]Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("helmcheck: %w", err)
	}
	defer f.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var objects []Object
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objects, nil
		}
		if err != nil {
			return nil, fmt.Errorf("helmcheck: read %s: %w", path, err)
		}
		source := fmt.Sprintf("%s#%d", filepath.Base(path), i)
		value, err := Decode(doc)
		if err != nil {
			return nil, fmt.Errorf("helmcheck: %s: %w", source, err)
		}
		if value == nil {
			continue
		}
		accessor, ok := value.(metav1.ObjectMetaAccessor)
		if !ok {
			return nil, fmt.Errorf("helmcheck: %s: %T has no object metadata", source, value)
		}
		meta := accessor.GetObjectMeta()
		if meta.GetName() == "" {
			return nil, fmt.Errorf("helmcheck: %s: object has no metadata.name", source)
		}
		objects = append(objects, Object{
			Source: source,
			Kind:   kindOf(value),
			Name:   meta.GetName(),
			Labels: meta.GetLabels(),
			Value:  value,
		})
	}
}

func kindOf(value any) string {
	t := fmt.Sprintf("%T", value)
	return t[strings.LastIndex(t, ".")+1:]
}

// LoadDir decodes every *.yaml file in dir, keyed by file name. It returns an error when dir is
// missing, holds no *.yaml file, a file holds no object, or any document does not decode.
func LoadDir(dir string) (map[string][]Object, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("helmcheck: %w", err)
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("helmcheck: rendered manifests: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("helmcheck: no *.yaml files in %s (run `make helm-check` to render them)", dir)
	}
	sort.Strings(paths)
	files := make(map[string][]Object, len(paths))
	for _, path := range paths {
		objects, err := LoadFile(path)
		if err != nil {
			return nil, err
		}
		if len(objects) == 0 {
			return nil, fmt.Errorf("helmcheck: %s holds no Kubernetes object", path)
		}
		files[filepath.Base(path)] = objects
	}
	return files, nil
}
