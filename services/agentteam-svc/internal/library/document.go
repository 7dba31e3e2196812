package library

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
)

// DescriptionMax is the Agent Skills limit of a description; a longer one is kept whole with a
// warning, since official skill files exceed it.
const DescriptionMax = 1024

// Limits of a document's fields, in characters.
const (
	VersionMax = 100
	SummaryMax = check.TextMax
	BodyMax    = check.DocMax
)

// Parse reads a document (a YAML front-matter header between two "---" lines, then a Markdown
// body) in our header keys or as an Agent Skills SKILL.md. src names where it came from: the
// folder of src.Path is the name an Agent Skills file should carry, and src.Commit is its
// version when the header names none. A byte-order mark, CRLF line ends and tab indentation are
// accepted. It returns Invalid with a message naming what is wrong and on which line.
func Parse(content string, src Source) (Item, error) {
	text := strings.TrimPrefix(content, "\ufeff")
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	var c check.Checker
	c.Text("content", &text, BodyMax)
	if err := c.First(); err != nil {
		return Item{}, err
	}
	lines := strings.Split(text, "\n")
	if strings.TrimRight(lines[0], " \t") != "---" {
		return Item{}, malformed(1, "the document must start with a \"---\" line that opens its front matter")
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return Item{}, malformed(len(lines), "the front matter opened on line 1 is never closed with a \"---\" line")
	}
	header := make([]string, 0, end-1)
	for _, l := range lines[1:end] {
		header = append(header, untab(l))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(header, "\n")), &doc); err != nil {
		return Item{}, yamlError(err)
	}
	if len(doc.Content) == 0 {
		return Item{}, malformed(2, "the front matter is empty")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return Item{}, malformed(root.Line+1, "the front matter must be a mapping of keys to values")
	}
	h, err := readHeader(root)
	if err != nil {
		return Item{}, err
	}
	it := h.item(strings.TrimLeft(strings.Join(lines[end+1:], "\n"), "\n"), src)
	if check.Blank(it.Body) {
		return Item{}, malformed(end+1, "the document has no Markdown body after its front matter")
	}
	err = checkDocument(it, h)
	it.Warnings = h.warnings
	return it, err
}

// untab turns the tabs that indent a header line into two spaces each (YAML forbids tabs there).
func untab(l string) string {
	n := len(l) - len(strings.TrimLeft(l, "\t"))
	if n == 0 {
		return l
	}
	return strings.Repeat("  ", n) + l[n:]
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlError restates a YAML error with the line number of the document (the header starts on
// line 2).
func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 2
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		line = n + 1
		msg = strings.TrimSpace(strings.Replace(msg, m[0]+":", "", 1))
		if strings.HasPrefix(msg, "did not find expected") {
			// The YAML library counts these (an unclosed flow list or mapping) from the line
			// before the one that opened them.
			line++
		}
	}
	return malformed(line, "the front matter is not valid YAML: %s", msg)
}

// malformed is the 400 of a malformed document.
func malformed(line int, format string, args ...any) error {
	return apperr.Invalidf("Malformed document: line %d: %s.", line, fmt.Sprintf(format, args...))
}

// header holds the front matter's values and the lines they came from.
type header struct {
	values   map[string]string
	lines    map[string]int
	roles    []string
	tools    []string
	context  []string
	actions  []Action
	tests    []GoldenTest
	metadata map[string]string
	warnings []string
}

// readHeader decodes every known key of the mapping; an unknown key is reported as a warning.
func readHeader(root *yaml.Node) (*header, error) {
	h := &header{values: map[string]string{}, lines: map[string]int{}}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		line := k.Line + 1
		h.lines[k.Value] = line
		var err error
		switch k.Value {
		case "skillKey", "profileKey", "name", "version", "summary", "description", "visibility", "minTier", "license", "compatibility":
			h.values[k.Value], err = scalar(k.Value, v)
		case "inputs", "outputs":
			var list []string
			if list, err = strList(k.Value, v, "\n"); err == nil {
				h.values[k.Value] = strings.Join(list, "\n")
			}
		case "roles":
			h.roles, err = strList(k.Value, v, ",")
		case "tools":
			var list []string
			list, err = strList(k.Value, v, " ")
			h.tools = append(h.tools, list...)
		case "allowed-tools":
			var list []string
			list, err = strList(k.Value, v, toolSep)
			h.tools = append(h.tools, list...)
		case "context":
			h.context, err = strList(k.Value, v, "\n")
		case "actions":
			h.actions, err = actions(v)
		case "goldenTests":
			h.tests, err = goldenTests(v)
		case "metadata":
			h.metadata, err = metadata(v)
		default:
			h.warnings = append(h.warnings, fmt.Sprintf("line %d: unknown header key %q ignored", line, k.Value))
		}
		if err != nil {
			return nil, err
		}
	}
	return h, nil
}

func scalar(name string, v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode {
		return "", malformed(v.Line+1, "%s must be a single value", name)
	}
	if v.Tag == "!!null" {
		return "", nil
	}
	return strings.TrimSpace(v.Value), nil
}

// strList reads a list of values, or one value split at sep (a space splits at any white space).
func strList(name string, v *yaml.Node, sep string) ([]string, error) {
	if v.Kind == yaml.ScalarNode {
		s, err := scalar(name, v)
		return splitList(s, sep), err
	}
	if v.Kind != yaml.SequenceNode {
		return nil, malformed(v.Line+1, "%s must be a list of values", name)
	}
	out := make([]string, 0, len(v.Content))
	for _, n := range v.Content {
		if n.Kind != yaml.ScalarNode {
			return nil, malformed(n.Line+1, "every item of %s must be a single value", name)
		}
		if s := strings.TrimSpace(n.Value); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

func splitList(s, sep string) []string {
	var parts []string
	switch sep {
	case " ":
		parts = strings.Fields(s)
	case toolSep:
		parts = toolEntries(s)
	default:
		parts = strings.Split(s, sep)
	}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// toolSep marks the Agent Skills allowed-tools rule for splitList.
const toolSep = "allowed-tools"

// toolEntries splits an Agent Skills allowed-tools value into its tools: the format's entries
// are separated by white space or commas, and a tool's parenthesised pattern is part of its
// entry, so "Bash(git log:*) Read" is two tools, not three.
func toolEntries(s string) []string {
	var (
		out   []string
		cur   strings.Builder
		depth int
	)
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ',' || unicode.IsSpace(r)):
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(out, cur.String())
}

// fields reads a list of mappings whose values are single values, keyed by the allowed names.
func fields(name string, v *yaml.Node, allowed ...string) ([]map[string]string, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, malformed(v.Line+1, "%s must be a list", name)
	}
	out := make([]map[string]string, 0, len(v.Content))
	for _, n := range v.Content {
		if n.Kind != yaml.MappingNode {
			return nil, malformed(n.Line+1, "every item of %s must be a mapping with %s", name, strings.Join(allowed, ", "))
		}
		m := map[string]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if !contains(allowed, k) {
				return nil, malformed(n.Content[i].Line+1, "%s items accept only %s, not %q", name, strings.Join(allowed, ", "), k)
			}
			s, err := scalar(name+"."+k, n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k] = s
		}
		out = append(out, m)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func actions(v *yaml.Node) ([]Action, error) {
	list, err := fields("actions", v, "name", "risk", "description")
	out := make([]Action, len(list))
	for i, m := range list {
		out[i] = Action{Name: m["name"], Risk: m["risk"], Description: m["description"]}
	}
	return out, err
}

func goldenTests(v *yaml.Node) ([]GoldenTest, error) {
	list, err := fields("goldenTests", v, "input", "expected")
	out := make([]GoldenTest, len(list))
	for i, m := range list {
		out[i] = GoldenTest{Input: m["input"], Expected: m["expected"]}
	}
	return out, err
}

// metadata reads a map of strings: every value is kept as written (1.0 stays "1.0").
func metadata(v *yaml.Node) (map[string]string, error) {
	if v.Kind != yaml.MappingNode {
		return nil, malformed(v.Line+1, "metadata must be a mapping of names to strings")
	}
	out := make(map[string]string, len(v.Content)/2)
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if val.Kind != yaml.ScalarNode {
			return nil, malformed(val.Line+1, "metadata.%s must be a string", k.Value)
		}
		out[k.Value] = val.Value
	}
	return out, nil
}

// Metadata keys through which an Agent Skills file, whose format has no roles or golden tests,
// carries them: roles (comma-separated) and golden-test-<n>-input / golden-test-<n>-expected.
var metaTest = regexp.MustCompile(`^golden-test-(\d+)-(input|expected)$`)

// item builds the document's item; Agent Skills keys fill what our keys leave empty.
func (h *header) item(body string, src Source) Item {
	v := h.values
	it := Item{
		Key: firstOf(v["skillKey"], v["profileKey"], v["name"]), Name: firstOf(v["name"], v["skillKey"], v["profileKey"]),
		Version: firstOf(v["version"], h.metadata["version"], src.Commit), Summary: firstOf(v["summary"], v["description"]),
		Roles: h.roles, Inputs: v["inputs"], Outputs: v["outputs"], Actions: h.actions, Tools: h.tools, Context: h.context,
		MinTier: v["minTier"], GoldenTests: h.tests, Body: body, License: v["license"], Compatibility: v["compatibility"],
		Metadata: h.metadata, Source: src,
	}
	if vis, ok := ParseVisibility(v["visibility"]); ok {
		it.Visibility = vis
	}
	if len(it.Roles) == 0 {
		it.Roles = splitList(h.metadata["roles"], ",")
	}
	if len(it.GoldenTests) == 0 {
		it.GoldenTests = metaGoldenTests(h.metadata)
	}
	return it
}

func metaGoldenTests(meta map[string]string) []GoldenTest {
	byN := map[int]*GoldenTest{}
	for k, val := range meta {
		m := metaTest.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if byN[n] == nil {
			byN[n] = &GoldenTest{}
		}
		if m[2] == "input" {
			byN[n].Input = val
		} else {
			byN[n].Expected = val
		}
	}
	ns := make([]int, 0, len(byN))
	for n := range byN {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	out := make([]GoldenTest, 0, len(ns))
	for _, n := range ns {
		out = append(out, *byN[n])
	}
	return out
}

func firstOf(values ...string) string {
	for _, s := range values {
		if s != "" {
			return s
		}
	}
	return ""
}

// checkDocument applies the document rules with the header's lines, then the rules every item
// follows.
func checkDocument(it Item, h *header) error {
	keyName := "skillKey"
	for _, k := range []string{"skillKey", "profileKey", "name"} {
		if h.values[k] != "" {
			keyName = k
			break
		}
	}
	line := h.lines[keyName]
	switch {
	case it.Key == "":
		return malformed(2, "the header needs a skillKey (or an Agent Skills name)")
	case !ValidKey(it.Key):
		return malformed(line, "%s must be 1-64 lower-case letters, digits and single hyphens, without a leading or trailing hyphen", keyName)
	case it.Version == "":
		return malformed(2, "the header needs a version (version, metadata.version, or the source commit)")
	case keyName == "name" && h.values["description"] == "":
		return malformed(line, "an Agent Skills document needs a description")
	}
	if folder := folderOf(it.Source.Path); keyName == "name" && folder != "" && folder != it.Key {
		h.warnings = append(h.warnings, fmt.Sprintf("line %d: name %q does not match its folder %q", line, it.Key, folder))
	}
	if n := utf8.RuneCountInString(h.values["description"]); n > DescriptionMax {
		h.warnings = append(h.warnings, fmt.Sprintf("line %d: description has %d characters, more than the %d the Agent Skills format allows; kept whole", h.lines["description"], n, DescriptionMax))
	}
	return checkItem(it)
}

// folderOf is the name of the folder holding path ("" for a file at the root).
func folderOf(path string) string {
	path = strings.Trim(path, "/")
	i := strings.LastIndex(path, "/")
	if i < 0 {
		return ""
	}
	dir := path[:i]
	return dir[strings.LastIndex(dir, "/")+1:]
}

// checkItem applies the field limits every item follows, however it was written.
func checkItem(it Item) error {
	var c check.Checker
	c.List("roles", it.Roles, check.ListMax, check.NameMax)
	c.List("tools", it.Tools, check.ListMax, check.NameMax)
	c.List("context", it.Context, check.ListMax, check.NameMax)
	c.AddIf(len(it.Actions) > check.ListMax || len(it.GoldenTests) > check.ListMax, "actions and goldenTests",
		fmt.Sprintf("must have at most %d items", check.ListMax))
	c.Text("name", &it.Name, check.NameMax)
	c.Text("version", &it.Version, VersionMax)
	c.Text("summary", &it.Summary, SummaryMax)
	c.Text("inputs", &it.Inputs, check.TextMax)
	c.Text("outputs", &it.Outputs, check.TextMax)
	c.Text("minTier", &it.MinTier, check.NameMax)
	c.Text("body", &it.Body, BodyMax)
	c.Text("license", &it.License, check.TextMax)
	c.Text("compatibility", &it.Compatibility, check.TextMax)
	for _, a := range it.Actions {
		c.Text("actions name", &a.Name, check.NameMax)
		c.Text("actions risk", &a.Risk, check.NameMax)
		c.Text("actions description", &a.Description, check.TextMax)
	}
	for _, t := range it.GoldenTests {
		c.Text("goldenTests input", &t.Input, check.TextMax)
		c.Text("goldenTests expected", &t.Expected, check.TextMax)
	}
	for k, v := range it.Metadata {
		c.Text("metadata key", &k, check.NameMax)
		c.Text("metadata."+k, &v, check.TextMax)
	}
	return c.First()
}
