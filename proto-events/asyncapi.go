package events

import (
	"embed"
	"slices"
)

// documents holds the AsyncAPI documents scripts/gen-proto.sh generates from the catalogue and
// the proto descriptors (proto-events/cmd/asyncapigen).
//
//go:embed asyncapi/*.json
var documents embed.FS

// DocumentID is the id of service's AsyncAPI document, "urn:motionstudio:asyncapi:<service>".
// Event data schemas (Entry.DataSchema) are this id with a JSON pointer into the document.
func DocumentID(service string) string { return "urn:motionstudio:asyncapi:" + service }

// AsyncAPI returns service's AsyncAPI 3.0 document as JSON: a channel for every subject the
// service publishes or consumes, a send operation for each subject it publishes and a receive
// operation for each of its consumers, and the messages with their CloudEvents headers and
// protojson payload schemas. It returns false for a name that is not one of Services().
func AsyncAPI(service string) ([]byte, bool) {
	if !slices.Contains(Services(), service) {
		return nil, false
	}
	doc, err := documents.ReadFile("asyncapi/" + service + ".json")
	if err != nil {
		return nil, false
	}
	return doc, true
}
