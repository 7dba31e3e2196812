package asyncapi

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// builder collects the component schemas of the payloads and of the messages they nest.
type builder struct {
	comments Comments
	schemas  object
}

// int64Pattern is the protojson spelling of 64-bit integers: a decimal string.
const int64Pattern = `^-?[0-9]+$`

// message registers md's schema (and those it nests) under its full name and returns a
// reference to it.
func (b *builder) message(md protoreflect.MessageDescriptor) (object, error) {
	key := string(md.FullName())
	r := ref("#/components/schemas/" + key)
	if _, done := b.schemas[key]; done {
		return r, nil
	}
	// Registered before the fields so that a recursive message refers to itself.
	s := object{"type": "object", "title": string(md.Name())}
	b.schemas[key] = s
	if c := b.comments(md.FullName()); c != "" {
		s["description"] = c
	}
	props, required := object{}, []any{}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		fs, err := b.field(fd)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fd.FullName(), err)
		}
		if c := b.comments(fd.FullName()); c != "" {
			fs = withDescription(fs, c)
		}
		props[string(fd.Name())] = fs
		if fd.ContainingOneof() == nil {
			required = append(required, string(fd.Name()))
		}
	}
	s["properties"] = props
	if len(required) > 0 {
		s["required"] = required
	}
	return r, nil
}

// withDescription adds a description beside a schema; a reference cannot carry siblings, so
// it is wrapped.
func withDescription(s object, description string) object {
	if _, isRef := s["$ref"]; isRef {
		return object{"allOf": []any{s}, "description": description}
	}
	s["description"] = description
	return s
}

// field is the schema of a field's value as protojson writes it with every field present.
func (b *builder) field(fd protoreflect.FieldDescriptor) (object, error) {
	switch {
	case fd.IsMap():
		v, err := b.single(fd.MapValue(), false)
		if err != nil {
			return nil, err
		}
		return object{"type": "object", "additionalProperties": v}, nil
	case fd.IsList():
		item, err := b.single(fd, false)
		if err != nil {
			return nil, err
		}
		return object{"type": "array", "items": item}, nil
	default:
		// An unset message field outside a oneof is written as null.
		return b.single(fd, fd.ContainingOneof() == nil)
	}
}

// single is the schema of one value of fd's type; nullable allows null for an unset message.
func (b *builder) single(fd protoreflect.FieldDescriptor, nullable bool) (object, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return object{"type": "boolean"}, nil
	case protoreflect.StringKind:
		return object{"type": "string"}, nil
	case protoreflect.BytesKind:
		return object{"type": "string", "contentEncoding": "base64"}, nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return object{"type": "integer", "format": "int32"}, nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return object{"type": "integer", "minimum": 0, "maximum": 4294967295}, nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return object{"type": "string", "pattern": int64Pattern}, nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return object{"type": "string", "pattern": `^[0-9]+$`}, nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return object{"oneOf": []any{
			object{"type": "number"},
			object{"type": "string", "enum": []any{"NaN", "Infinity", "-Infinity"}},
		}}, nil
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		names := make([]any, values.Len())
		for i := range values.Len() {
			names[i] = string(values.Get(i).Name())
		}
		s := object{"type": "string", "enum": names}
		if c := b.comments(fd.Enum().FullName()); c != "" {
			s["description"] = c
		}
		return s, nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		s, err := b.nested(fd.Message())
		if err != nil || !nullable {
			return s, err
		}
		if t, ok := s["type"].(string); ok {
			s["type"] = []any{t, "null"}
			return s, nil
		}
		return object{"oneOf": []any{s, object{"type": "null"}}}, nil
	default:
		return nil, fmt.Errorf("unsupported kind %s", fd.Kind())
	}
}

// nested is the schema of a message value: well-known types as protojson spells them, other
// messages by reference.
func (b *builder) nested(md protoreflect.MessageDescriptor) (object, error) {
	name := md.FullName()
	switch name {
	case "google.protobuf.Timestamp":
		return object{"type": "string", "format": "date-time"}, nil
	case "google.protobuf.Duration":
		return object{"type": "string", "pattern": `^-?[0-9]+(\.[0-9]{1,9})?s$`}, nil
	}
	if strings.HasPrefix(string(name), "google.protobuf.") {
		return nil, fmt.Errorf("well-known type %s has no schema yet", name)
	}
	return b.message(md)
}
