package events

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Decode decodes a protojson payload received on subject into that subject's
// message, for consumers that handle several subjects with one handler. It
// accepts both lowerCamelCase and snake_case field names and ignores unknown
// fields, so a consumer keeps working when a producer adds fields. Subject is
// the catalogue subject, without any bus prefix. It returns an error when the
// subject is not in the catalogue or data is not valid JSON for its message.
func Decode(subject string, data []byte) (proto.Message, error) {
	e, ok := Lookup(subject)
	if !ok {
		return nil, fmt.Errorf("events: decode: unknown subject %q", subject)
	}
	m := e.New()
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("events: decode %s: %w", subject, err)
	}
	return m, nil
}
