package library_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
)

// invalid returns the plain-text message of a 400.
func invalid(err error) string {
	GinkgoHelper()
	e, ok := apperr.As(err)
	Expect(ok).To(BeTrue(), "%v", err)
	Expect(e.Kind).To(Equal(apperr.Invalid))
	return e.Message
}

var _ = Describe("parsing a document", func() {
	It("reads every header key of ours and the Markdown body", func() {
		it, err := library.Parse(`---
skillKey: write-tests
name: Write tests
version: "2.0"
summary: Writes tests first.
roles: [qa, backend]
inputs: a task
outputs: test files
actions:
  - name: open-pr
    risk: Medium
    description: Opens a pull request.
tools: [go, ginkgo]
context: [README.md]
visibility: Public
minTier: Pro
goldenTests:
  - input: add a list endpoint
    expected: tests for 200 and 403
---
# Write tests

Start from the contract.
`, library.Source{})
		Expect(err).NotTo(HaveOccurred())
		Expect(it.Key).To(Equal("write-tests"))
		Expect(it.Name).To(Equal("Write tests"))
		Expect(it.Version).To(Equal("2.0"))
		Expect(it.Roles).To(Equal([]string{"qa", "backend"}))
		Expect(it.Actions).To(Equal([]library.Action{{Name: "open-pr", Risk: "Medium", Description: "Opens a pull request."}}))
		Expect(it.Tools).To(Equal([]string{"go", "ginkgo"}))
		Expect(it.Context).To(Equal([]string{"README.md"}))
		Expect(it.Visibility).To(Equal(library.Public))
		Expect(it.MinTier).To(Equal("Pro"))
		Expect(it.GoldenTests).To(Equal([]library.GoldenTest{{Input: "add a list endpoint", Expected: "tests for 200 and 403"}}))
		Expect(it.Body).To(Equal("# Write tests\n\nStart from the contract.\n"))
		Expect(it.Warnings).To(BeEmpty())
	})

	It("reads an Agent Skills file: name as key, description as summary, metadata as strings, allowed-tools as a string", func() {
		it, err := library.Parse(`---
name: pdf-forms
description: Fills PDF forms.
license: Apache-2.0
compatibility: Needs python3 and pypdf
metadata:
  version: 1.0
  author: example
  roles: qa, backend
  golden-test-1-input: fill the W-9
  golden-test-1-expected: a filled W-9
allowed-tools: Bash(python3:*) Read Write
---
Use pypdf.
`, library.Source{Path: "skills/pdf-forms/SKILL.md", Commit: "abc123"})
		Expect(err).NotTo(HaveOccurred())
		Expect(it.Key).To(Equal("pdf-forms"))
		Expect(it.Name).To(Equal("pdf-forms"))
		Expect(it.Summary).To(Equal("Fills PDF forms."))
		Expect(it.Version).To(Equal("1.0"), "metadata.version is kept as written, not as the float 1")
		Expect(it.Metadata).To(HaveKeyWithValue("author", "example"))
		Expect(it.Tools).To(Equal([]string{"Bash(python3:*)", "Read", "Write"}))
		Expect(it.License).To(Equal("Apache-2.0"))
		Expect(it.Compatibility).To(Equal("Needs python3 and pypdf"))
		Expect(it.Roles).To(Equal([]string{"qa", "backend"}))
		Expect(it.GoldenTests).To(Equal([]library.GoldenTest{{Input: "fill the W-9", Expected: "a filled W-9"}}))
		Expect(it.Warnings).To(BeEmpty())
	})

	It("takes allowed-tools as a list and the source commit as the version when the file names none", func() {
		it, err := library.Parse("---\nname: lint\ndescription: Lints.\nallowed-tools:\n  - Read\n  - Grep\n---\nRun the linter.\n",
			library.Source{Path: "lint/SKILL.md", Commit: "9f8e7d"})
		Expect(err).NotTo(HaveOccurred())
		Expect(it.Tools).To(Equal([]string{"Read", "Grep"}))
		Expect(it.Version).To(Equal("9f8e7d"))
	})

	It("keeps a description over 1,024 characters whole and warns", func() {
		long := strings.Repeat("a", 1500)
		it, err := library.Parse("---\nname: long\ndescription: "+long+"\n---\nBody.\n", library.Source{Path: "long/SKILL.md", Commit: "c1"})
		Expect(err).NotTo(HaveOccurred())
		Expect(it.Summary).To(Equal(long))
		Expect(it.Warnings).To(ContainElement(ContainSubstring("description has 1500 characters")))
	})

	It("reports a name that differs from its folder", func() {
		it, err := library.Parse("---\nname: deploy\ndescription: Deploys.\n---\nBody.\n", library.Source{Path: "ops/release/SKILL.md", Commit: "c1"})
		Expect(err).NotTo(HaveOccurred())
		Expect(it.Warnings).To(ContainElement(`line 2: name "deploy" does not match its folder "release"`))
	})

	It("accepts a byte-order mark, CRLF line ends and tab indentation", func() {
		it, err := library.Parse("\ufeff---\r\nskillKey: tabs\r\nname: Tabs\r\nversion: \"1\"\r\nroles:\r\n\t- qa\r\ngoldenTests:\r\n\t- input: a\r\n\t  expected: b\r\n---\r\nBody\r\n",
			library.Source{})
		Expect(err).NotTo(HaveOccurred())
		Expect(it.Key).To(Equal("tabs"))
		Expect(it.Roles).To(Equal([]string{"qa"}))
		Expect(it.GoldenTests).To(HaveLen(1))
		Expect(it.Body).To(Equal("Body\n"))
	})

	DescribeTable("splits allowed-tools as the Agent Skills format does, keeping a tool's parenthesised pattern whole",
		func(value string, tools []string) {
			it, err := library.Parse("---\nname: git\ndescription: Reads history.\nallowed-tools: "+value+"\n---\nBody.\n",
				library.Source{Path: "git/SKILL.md", Commit: "c1"})
			Expect(err).NotTo(HaveOccurred())
			Expect(it.Tools).To(Equal(tools))
		},
		Entry("a pattern with a space", `"Bash(git log:*) Read"`, []string{"Bash(git log:*)", "Read"}),
		Entry("commas and spaces", `"Bash(git diff:*), Bash(git log --oneline:*),Read  Grep"`,
			[]string{"Bash(git diff:*)", "Bash(git log --oneline:*)", "Read", "Grep"}),
		Entry("a comma inside a pattern", `"Bash(jq -r a,b:*) Write"`, []string{"Bash(jq -r a,b:*)", "Write"}),
	)

	It("refuses an Agent Skills document without a description, naming the field, and keeps our header format as it was", func() {
		_, err := library.Parse("---\nname: bare\nmetadata:\n  version: \"1\"\n---\nBody.\n", library.Source{Path: "bare/SKILL.md"})
		Expect(invalid(err)).To(Equal("Malformed document: line 2: an Agent Skills document needs a description."))
		_, err = library.Parse("---\nname: bare\ndescription: \"  \"\n---\nBody.\n", library.Source{Path: "bare/SKILL.md", Commit: "c1"})
		Expect(invalid(err)).To(ContainSubstring("needs a description"))

		it, err := library.Parse("---\nskillKey: own\nname: Own\nversion: \"1\"\n---\nBody.\n", library.Source{})
		Expect(err).NotTo(HaveOccurred())
		Expect(it.Key).To(Equal("own"))
	})

	DescribeTable("a malformed document is a 400 saying what is wrong and on which line",
		func(doc, message string) {
			_, err := library.Parse(doc, library.Source{})
			Expect(invalid(err)).To(Equal(message))
		},
		Entry("no front matter", "# Just Markdown\n",
			`Malformed document: line 1: the document must start with a "---" line that opens its front matter.`),
		Entry("front matter never closed", "---\nskillKey: a\nname: A\n",
			`Malformed document: line 4: the front matter opened on line 1 is never closed with a "---" line.`),
		Entry("invalid YAML", "---\nskillKey: a\nname: [unclosed\nversion: \"1\"\n---\nBody\n",
			"Malformed document: line 3: the front matter is not valid YAML: did not find expected ',' or ']'."),
		Entry("a list where one value belongs", "---\nskillKey: a\nname:\n  - x\nversion: \"1\"\n---\nBody\n",
			"Malformed document: line 4: name must be a single value."),
		Entry("roles as a mapping", "---\nskillKey: a\nname: A\nversion: \"1\"\nroles:\n  qa: yes\n---\nBody\n",
			"Malformed document: line 6: roles must be a list of values."),
		Entry("a golden test with an unknown field", "---\nskillKey: a\nname: A\nversion: \"1\"\ngoldenTests:\n  - input: x\n    output: y\n---\nBody\n",
			`Malformed document: line 7: goldenTests items accept only input, expected, not "output".`),
		Entry("metadata with a nested value", "---\nname: a\ndescription: d\nmetadata:\n  version:\n    major: 1\n---\nBody\n",
			"Malformed document: line 6: metadata.version must be a string."),
		Entry("an invalid Agent Skills name", "---\nname: PDF--Forms\ndescription: d\nmetadata:\n  version: \"1\"\n---\nBody\n",
			"Malformed document: line 2: name must be 1-64 lower-case letters, digits and single hyphens, without a leading or trailing hyphen."),
		Entry("no key", "---\nversion: \"1\"\n---\nBody\n",
			"Malformed document: line 2: the header needs a skillKey (or an Agent Skills name)."),
		Entry("no version", "---\nskillKey: a\nname: A\n---\nBody\n",
			"Malformed document: line 2: the header needs a version (version, metadata.version, or the source commit)."),
		Entry("no body", "---\nskillKey: a\nname: A\nversion: \"1\"\n---\n\n",
			"Malformed document: line 5: the document has no Markdown body after its front matter."),
		Entry("a header that is not a mapping", "---\n- a\n- b\n---\nBody\n",
			"Malformed document: line 2: the front matter must be a mapping of keys to values."),
	)
})

var _ = Describe("the resolution order", func() {
	item := func(id, org, version string, status library.Status) library.Item {
		return library.Item{ID: id, Key: "k", OrganizationID: org, Version: version, Status: status}
	}

	It("puts Published first, then the organization's own over shared, then the latest version by ordinal comparison", func() {
		items := []library.Item{
			item("1", "", "9.0", library.Draft),
			item("2", "org", "1.0", library.Draft),
			item("3", "", "2.0", library.Published),
			item("4", "org", "1.0", library.Published),
			item("5", "org", "10.0", library.Published),
			item("6", "", "3.0", library.Published),
		}
		library.Order(items)
		ids := make([]string, len(items))
		for i, it := range items {
			ids[i] = it.ID
		}
		// "10.0" < "1.0"? No: ordinal comparison puts "10.0" after "1.0", so 10.0 is the latest.
		Expect(ids).To(Equal([]string{"5", "4", "6", "3", "2", "1"}))
		winner, ok := library.Resolve(items)
		Expect(ok).To(BeTrue())
		Expect(winner.ID).To(Equal("5"))
	})

	It("lets the newer commit win between versions that are commits, whatever the hashes' bytes say", func() {
		at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
		commit := func(id, hash string, created time.Time) library.Item {
			it := item(id, "", hash, library.Published)
			it.Source, it.CreatedAt = library.Source{Commit: hash}, created
			return it
		}
		older, newer := commit("old", "ffff0000", at), commit("new", "0000ffff", at.Add(time.Hour))
		Expect(library.ResolvesBefore(newer, older)).To(BeTrue())
		Expect(library.ResolvesBefore(older, newer)).To(BeFalse())
		winner, _ := library.Resolve([]library.Item{older, newer})
		Expect(winner.ID).To(Equal("new"))

		named := item("named", "", "1.0", library.Published)
		named.CreatedAt = at.Add(2 * time.Hour)
		Expect(library.ResolvesBefore(named, item("nine", "", "9.0", library.Published))).To(BeFalse(), "named versions still compare as strings")
	})

	It("compares versions as strings, not numbers", func() {
		Expect(library.ResolvesBefore(item("a", "", "9", library.Published), item("b", "", "10", library.Published))).To(BeTrue())
	})

	It("resolves nothing from no versions", func() {
		_, ok := library.Resolve(nil)
		Expect(ok).To(BeFalse())
	})
})
