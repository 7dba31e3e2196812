package httpx

import (
	"encoding/json"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// yamlToJSON converts a YAML document (an OpenAPI file) to JSON. Mapping keys become strings
// (OpenAPI's unquoted status codes such as 200 included) and timestamps stay as written.
func yamlToJSON(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("parse yaml: %w", err)
	}
	if len(root.Content) == 0 {
		return nil, errors.New("empty document")
	}
	v, err := nodeValue(root.Content[0])
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func nodeValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.AliasNode:
		return nodeValue(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				if err := mergeInto(m, v); err != nil {
					return nil, err
				}
				continue
			}
			val, err := nodeValue(v)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			val, err := nodeValue(c)
			if err != nil {
				return nil, err
			}
			s = append(s, val)
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str", "!!timestamp", "!!binary":
			return n.Value, nil
		case "!!null":
			return nil, nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	default:
		return nil, fmt.Errorf("line %d: unsupported yaml node kind %d", n.Line, n.Kind)
	}
}

// mergeInto applies a YAML merge key (<<: *anchor), keeping keys already set.
func mergeInto(m map[string]any, v *yaml.Node) error {
	sources := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		sources = v.Content
	}
	for _, src := range sources {
		val, err := nodeValue(src)
		if err != nil {
			return err
		}
		merged, ok := val.(map[string]any)
		if !ok {
			return fmt.Errorf("line %d: merge value is not a mapping", src.Line)
		}
		for k, x := range merged {
			if _, set := m[k]; !set {
				m[k] = x
			}
		}
	}
	return nil
}
