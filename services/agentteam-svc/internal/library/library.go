// Package library is the versioned library shared by skills, agent profiles and product
// profiles: documents identified by (organization or shared, key, version), the publish gate
// (Published only with a role and a golden test, Public only when Published), the one
// resolution order a list, a versions view and a run all follow, the marketplace and installs,
// and the shared source a sync re-reads.
package library

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Kind says which library a document belongs to.
type Kind string

// The three libraries.
const (
	Skill          Kind = "skill"
	AgentProfile   Kind = "agent_profile"
	ProductProfile Kind = "product_profile"
)

// Status is Published when the document has at least one role and one golden test.
type Status string

// The statuses.
const (
	Draft     Status = "Draft"
	Published Status = "Published"
)

// Visibility says whether an organization's document is listed on the marketplace.
type Visibility string

// The visibilities.
const (
	PrivateToOrg Visibility = "PrivateToOrg"
	Public       Visibility = "Public"
)

// Origin says how a document entered its library.
type Origin string

// The origins.
const (
	Builtin   Origin = "Builtin"
	Authored  Origin = "Authored"
	Installed Origin = "Installed"
)

// Action is an action a skill may propose, with its risk.
type Action struct {
	Name, Risk, Description string
}

// GoldenTest is an input with the output a skill is expected to produce.
type GoldenTest struct {
	Input, Expected string
}

// Source says where a shared document was read from.
type Source struct {
	Repo, Path, Commit string
	// At is the commit's time; zero when the source names none (a directory, POST /index).
	At time.Time
	// Hash is the SHA-256 (hex) of the file a sync read; empty for a document indexed otherwise.
	Hash string
}

// Item is one version of a document of a library.
type Item struct {
	ID   string
	Kind Kind
	// OrganizationID is empty for a shared document.
	OrganizationID string
	Key            string
	Name           string
	Version        string
	Summary        string
	Roles          []string
	Inputs         string
	Outputs        string
	Actions        []Action
	Tools          []string
	Context        []string
	Visibility     Visibility
	MinTier        string
	Status         Status
	Origin         Origin
	GoldenTests    []GoldenTest
	Body           string
	License        string
	Compatibility  string
	Metadata       map[string]string
	Source         Source
	// Embedding is the 384-dimension vector of the name, summary and body; nil when none could be
	// computed.
	Embedding []float32
	// Warnings are what the parser accepted but reports (for example an over-long description).
	Warnings  []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Shared reports whether the item belongs to the shared library (no organization).
func (it Item) Shared() bool { return it.OrganizationID == "" }

// derive applies the publish gate: Published only with at least one role and one golden test,
// and Public only while Published. Every index, authoring, fork and install calls it.
func (it *Item) derive() {
	it.Status = Draft
	if len(it.Roles) > 0 && len(it.GoldenTests) > 0 {
		it.Status = Published
	}
	if it.Visibility != Public || it.Status != Published {
		it.Visibility = PrivateToOrg
	}
}

// ResolvesBefore is the one resolution order: Published first, organization-owned over shared,
// then the latest version: between two versions that are commits (files that name no version)
// the newer commit, by its time, else by ordinal string comparison (the id breaks the remaining
// ties so the order is total). A hash's bytes say nothing of its age.
func ResolvesBefore(a, b Item) bool { return resolution(a, b) < 0 }

func resolution(a, b Item) int {
	if a.Status != b.Status {
		if a.Status == Published {
			return -1
		}
		return 1
	}
	if a.Shared() != b.Shared() {
		if !a.Shared() {
			return -1
		}
		return 1
	}
	if a.commitVersion() && b.commitVersion() {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
	}
	if c := strings.Compare(b.Version, a.Version); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// commitVersion reports whether the item's version is its source commit; its creation time is
// then the commit's time (see Service.asShared).
func (it Item) commitVersion() bool { return it.Source.Commit != "" && it.Version == it.Source.Commit }

// Order sorts items by key, and per key in resolution order.
func Order(items []Item) {
	slices.SortStableFunc(items, func(a, b Item) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), resolution(a, b))
	})
}

// Resolve returns the item a run resolves first among the versions of one key; ok is false when
// there is none.
func Resolve(versions []Item) (Item, bool) {
	if len(versions) == 0 {
		return Item{}, false
	}
	return slices.MinFunc(versions, resolution), true
}

// keyPattern is the Agent Skills name rule, applied to every key: lower-case letters, digits
// and single hyphens, no leading or trailing hyphen.
var keyPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// KeyMax is the longest key.
const KeyMax = 64

// ValidKey reports whether key follows the key rule.
func ValidKey(key string) bool { return len(key) <= KeyMax && keyPattern.MatchString(key) }

// ParseVisibility reads a visibility case-insensitively; ok is false for an unknown value.
func ParseVisibility(s string) (Visibility, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "public":
		return Public, true
	case "privatetoorg":
		return PrivateToOrg, true
	}
	return "", false
}
