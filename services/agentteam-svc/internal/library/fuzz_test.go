package library_test

import (
	"testing"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
)

// FuzzParse feeds documents to the parser: it never panics, refuses with a 400 only, and what
// it accepts has a valid key, a version and a body. `go test` runs the seed corpus in
// testdata/fuzz/FuzzParse; `go test -fuzz FuzzParse` explores further.
func FuzzParse(f *testing.F) {
	f.Add("---\nskillKey: a\nname: A\nversion: \"1\"\n---\nBody\n", "a/SKILL.md", "")
	f.Fuzz(func(t *testing.T, doc, path, commit string) {
		it, err := library.Parse(doc, library.Source{Path: path, Commit: commit})
		if err != nil {
			if e, ok := apperr.As(err); !ok || e.Kind != apperr.Invalid || e.Message == "" {
				t.Fatalf("error %v is not a 400 with a message", err)
			}
			return
		}
		if !library.ValidKey(it.Key) || it.Version == "" || it.Body == "" || !utf8.ValidString(it.Body) {
			t.Fatalf("accepted an invalid document: key %q version %q body %q", it.Key, it.Version, it.Body)
		}
	})
}
