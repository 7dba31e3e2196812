// Command asyncapigen writes the AsyncAPI document of every service, <out>/<service>.json, from
// the events catalogue and the payloads' proto descriptors. -descriptors names a
// FileDescriptorSet of the .proto sources made by protoc with --include_source_info and
// --include_imports, from which the documents take their descriptions. scripts/gen-proto.sh
// runs it after protoc.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/proto-events/internal/asyncapi"
)

func main() {
	descriptors := flag.String("descriptors", "", "FileDescriptorSet of the .proto sources, with source info")
	out := flag.String("out", "", "directory to write <service>.json into")
	flag.Parse()
	if err := run(*descriptors, *out); err != nil {
		fmt.Fprintln(os.Stderr, "asyncapigen:", err)
		os.Exit(1)
	}
}

func run(descriptors, out string) error {
	if descriptors == "" || out == "" {
		return fmt.Errorf("usage: asyncapigen -descriptors <file> -out <dir>")
	}
	comments, err := loadComments(descriptors)
	if err != nil {
		return err
	}
	for _, service := range events.Services() {
		doc, err := asyncapi.Build(service, comments)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return fmt.Errorf("encode %s: %w", service, err)
		}
		if err := os.WriteFile(filepath.Join(out, service+".json"), buf.Bytes(), 0o644); err != nil { // #nosec G306 -- a generated, committed public document
			return err
		}
	}
	return nil
}

// loadComments reads the descriptor set and answers each declaration's leading comment, with
// the comment markers' spaces and blank edges removed.
func loadComments(path string) (asyncapi.Comments, error) {
	raw, err := os.ReadFile(path) // #nosec G304 -- the generator reads the descriptor set named on its command line
	if err != nil {
		return nil, err
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return func(name protoreflect.FullName) string {
		d, err := files.FindDescriptorByName(name)
		if err != nil {
			return ""
		}
		loc := d.ParentFile().SourceLocations().ByDescriptor(d)
		var lines []string
		for line := range strings.SplitSeq(strings.TrimSpace(loc.LeadingComments), "\n") {
			lines = append(lines, strings.TrimSpace(line))
		}
		return strings.Join(lines, " ")
	}, nil
}
