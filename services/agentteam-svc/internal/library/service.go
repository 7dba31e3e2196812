package library

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
)

// Page is a validated page of a list.
type Page struct{ Offset, Limit int }

// Query selects the items of one library a list shows: the shared ones plus, when
// OrganizationID is set, the organization's own; Role and Visibility filter when set.
type Query struct {
	Kind           Kind
	OrganizationID string
	Role           string
	Visibility     Visibility
}

// Listed selects the marketplace's rows: other organizations' items of one origin, visibility
// and status.
type Listed struct {
	Kind       Kind
	ExceptOrg  string
	Origin     Origin
	Visibility Visibility
	Status     Status
}

// Listing is a marketplace row: an item and whether the browsing organization already has its
// key and version.
type Listing struct {
	Item
	AlreadyInLibrary bool
}

// Store persists library items; each organization mutation writes its audit entry in the same
// transaction.
type Store interface {
	// List returns every item q selects whose key is on page p of the distinct keys q selects,
	// by key and per key in resolution order (Order); an item carries what a list shows and
	// what Order reads, not its body, embedding, inputs, outputs, tools, context, metadata or
	// source.
	List(ctx context.Context, q Query, p Page) ([]Item, error)
	// Items returns every item q selects with one of the keys, with bodies and embeddings, in
	// the same order as List.
	Items(ctx context.Context, q Query, keys []string) ([]Item, error)
	// Item returns NotFound for an unknown id of the kind.
	Item(ctx context.Context, kind Kind, id string) (Item, error)
	// Version returns the organization's (or, for "", the shared) item of key and version; ok is
	// false when there is none.
	Version(ctx context.Context, kind Kind, organizationID, key, version string) (Item, bool, error)
	// Insert stores a new item; Conflict when its identity exists.
	Insert(ctx context.Context, it Item, e audit.Entry) error
	// UpsertShared stores shared items (of distinct identities) in one statement, replacing the
	// content of those with the same kind, key and version; it returns what was stored, in any
	// order.
	UpsertShared(ctx context.Context, items []Item) ([]Item, error)
	// SeedShared inserts shared items whose identity is still free, never replacing one.
	SeedShared(ctx context.Context, items []Item) error
	// Update locks the organization's item of key and version, lets fn change it and saves it with
	// the audit entry fn returns; NotFound (with notFound's message) when there is none.
	Update(ctx context.Context, kind Kind, organizationID, key, version string, notFound error, fn func(*Item) (audit.Entry, error)) (Item, error)
	// Marketplace returns a page of the rows l selects, by key then newest version.
	Marketplace(ctx context.Context, l Listed, p Page) ([]Item, error)
	// Owned reports which of the "key\x00version" identities the organization has.
	Owned(ctx context.Context, kind Kind, organizationID string, identities []string) (map[string]bool, error)
	// SharedFrom returns the shared items of the kind read from repo (without bodies, with their
	// content hash and embedding).
	SharedFrom(ctx context.Context, kind Kind, repo string) ([]Item, error)
	// Delete removes the items.
	Delete(ctx context.Context, ids []string) error
}

// Embedder turns texts into 384-dimension vectors (internal/embed's contract).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Products is the product structure a product profile is applied to.
type Products interface {
	// SetIdentity sets the identity of the organization's product and writes the audit entry in
	// the same transaction; NotFound for a product outside the organization.
	SetIdentity(ctx context.Context, organizationID, productID, identity string, e audit.Entry) error
}

// Deps are what a Service needs.
type Deps struct {
	Store    Store
	Access   *access.Checker
	Embedder Embedder
	Products Products
	Source   SourceReader
	// AdminKey guards the shared library; empty refuses every admin call.
	AdminKey string
	// HookSecret verifies push hooks when set.
	HookSecret string
	NewID      func() string
	Now        func() time.Time
	// Log records the shared library's changes (index, sync), which belong to no organization
	// and so have no audit record.
	Log *slog.Logger
}

// Service runs the three libraries.
type Service struct {
	d Deps
}

// NewService returns a Service.
func NewService(d Deps) *Service { return &Service{d: d} }

// Library is one kind's operations.
type Library struct {
	s *Service
	r rules
}

// rules are what differ between the libraries: who may browse and manage, the audit names and
// the wording of messages.
type rules struct {
	kind           Kind
	browse, manage access.Capability
	action, entity string
	noun           string
	notFound       string
}

// Library returns the operations of one kind's library: skills and agent profiles are browsed
// with ViewBoard and managed with ManageSkills and ConfigureAgents; every product-profile
// operation is owner-level.
func (s *Service) Library(kind Kind) *Library {
	switch kind {
	case AgentProfile:
		return &Library{s, rules{AgentProfile, access.ViewBoard, access.ConfigureAgents, "agent_profile", "AgentProfile", "agent profile", "Agent profile not found."}}
	case ProductProfile:
		return &Library{s, rules{ProductProfile, access.OwnerLevel, access.OwnerLevel, "product_profile", "ProductProfile", "product profile", "Product profile not found."}}
	default:
		return &Library{s, rules{Skill, access.ViewBoard, access.ManageSkills, "skill", "Skill", "skill", "Skill not found."}}
	}
}

// NotFound is the library's 404.
func (l *Library) NotFound() error { return apperr.E(apperr.NotFound, "not_found", l.r.notFound) }

func (l *Library) require(ctx context.Context, memberID, organizationID string, c access.Capability) error {
	_, err := l.s.d.Access.Require(ctx, memberID, c, access.Org(organizationID))
	return err
}

// List returns the shared items plus, with an organization (browse capability), its own, by
// key and per key in resolution order; a page counts keys. An unknown visibility is ignored.
func (l *Library) List(ctx context.Context, memberID, organizationID, role, visibility string, p Page) ([]Item, error) {
	if organizationID != "" {
		if err := l.require(ctx, memberID, organizationID, l.r.browse); err != nil {
			return nil, err
		}
	}
	q := Query{Kind: l.r.kind, OrganizationID: organizationID, Role: role}
	q.Visibility, _ = ParseVisibility(visibility)
	return l.s.d.Store.List(ctx, q, p)
}

// Versions returns every version of key the organization sees, in resolution order (the first
// is the one a run resolves); NotFound when there is none.
func (l *Library) Versions(ctx context.Context, memberID, organizationID, key string) ([]Item, error) {
	if organizationID != "" {
		if err := l.require(ctx, memberID, organizationID, l.r.browse); err != nil {
			return nil, err
		}
	}
	items, err := l.s.d.Store.Items(ctx, Query{Kind: l.r.kind, OrganizationID: organizationID}, []string{key})
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, l.NotFound()
	}
	return items, nil
}

// Resolve returns the item the organization resolves for key: the exact version when one is
// given (own before shared), else the first in resolution order; NotFound when there is none.
func (l *Library) Resolve(ctx context.Context, organizationID, key, version string) (Item, error) {
	items, err := l.s.d.Store.Items(ctx, Query{Kind: l.r.kind, OrganizationID: organizationID}, []string{key})
	if err != nil {
		return Item{}, err
	}
	if version != "" {
		items = matching(items, version)
	}
	it, ok := Resolve(items)
	if !ok {
		return Item{}, l.NotFound()
	}
	return it, nil
}

func matching(items []Item, version string) []Item {
	var out []Item
	for _, it := range items {
		if it.Version == version {
			out = append(out, it)
		}
	}
	return out
}

// Author stores a new version written by the organization (manage capability): origin Authored,
// private until listed, with the publish gate applied. It returns Invalid when the key, name,
// version or body is blank or a field breaks its rule, and Conflict when the organization has
// that key and version.
func (l *Library) Author(ctx context.Context, memberID, organizationID string, it Item) (Item, error) {
	if check.Blank(it.Key) || check.Blank(it.Name) || check.Blank(it.Version) || check.Blank(it.Body) {
		return Item{}, apperr.Invalidf("skillKey, name, version, and body are required.")
	}
	if !ValidKey(it.Key) {
		return Item{}, apperr.Invalidf("skillKey must be 1-64 lower-case letters, digits and single hyphens, without a leading or trailing hyphen.")
	}
	if err := checkItem(it); err != nil {
		return Item{}, err
	}
	if err := l.require(ctx, memberID, organizationID, l.r.manage); err != nil {
		return Item{}, err
	}
	it.Visibility = PrivateToOrg
	return l.insert(ctx, memberID, organizationID, it, Authored, "authored", "")
}

// Upload parses a document and stores it as an authored version (see Author). It returns
// Invalid for blank content or a malformed document.
func (l *Library) Upload(ctx context.Context, memberID, organizationID, content string) (Item, error) {
	if check.Blank(content) {
		return Item{}, apperr.Invalidf("content is required.")
	}
	it, err := Parse(content, Source{})
	if err != nil {
		return Item{}, err
	}
	if err := l.require(ctx, memberID, organizationID, l.r.manage); err != nil {
		return Item{}, err
	}
	it.Visibility = PrivateToOrg
	return l.insert(ctx, memberID, organizationID, it, Authored, "authored", "")
}

// insert makes it a new private item of the organization, derives its status, embeds it and
// stores it with the audit entry of the verb.
func (l *Library) insert(ctx context.Context, memberID, organizationID string, it Item, origin Origin, verb, detail string) (Item, error) {
	now := l.s.d.Now()
	it.ID, it.Kind, it.OrganizationID, it.Origin = l.s.d.NewID(), l.r.kind, organizationID, origin
	it.CreatedAt, it.UpdatedAt = now, now
	l.s.prepare(ctx, &it)
	if detail == "" {
		detail = it.Key + "@" + it.Version
	}
	e := audit.New(organizationID, memberID, l.r.action+"."+verb, l.r.entity, it.ID, detail)
	if err := l.s.d.Store.Insert(ctx, it, e); err != nil {
		if apperr.Is(err, apperr.Conflict) {
			return Item{}, l.duplicate(it)
		}
		return Item{}, err
	}
	return it, nil
}

func (l *Library) duplicate(it Item) error {
	return apperr.E(apperr.Conflict, "duplicate", fmt.Sprintf("This organization already has %s %s version %s.", l.r.noun, it.Key, it.Version))
}

// prepare applies the publish gate and computes the embedding; an embedder failure leaves the
// item without one and says so in its warnings.
func (s *Service) prepare(ctx context.Context, it *Item) {
	it.derive()
	it.Embedding = nil
	v, err := s.embed(ctx, it.Name+"\n"+it.Summary+"\n"+it.Body)
	if err != nil {
		it.Warnings = append(it.Warnings, "no embedding: "+message(err))
		return
	}
	it.Embedding = v
}

// embed is the vector of one text; nil without an embedder.
func (s *Service) embed(ctx context.Context, text string) ([]float32, error) {
	if s.d.Embedder == nil {
		return nil, nil
	}
	vs, err := s.d.Embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, errors.New("library: the embedder answered no vector")
	}
	return vs[0], nil
}

// Fork copies the organization's own or the shared version of key into a new private Authored
// item of the organization, golden tests included, optionally renamed (manage capability). It
// returns NotFound and Conflict when the organization already has that version.
func (l *Library) Fork(ctx context.Context, memberID, organizationID, key, version, name string) (Item, error) {
	var c check.Checker
	c.Text("name", &name, check.NameMax)
	if err := c.First(); err != nil {
		return Item{}, err
	}
	if check.Blank(version) {
		return Item{}, apperr.Invalidf("version is required.")
	}
	if err := l.require(ctx, memberID, organizationID, l.r.manage); err != nil {
		return Item{}, err
	}
	src, err := l.Resolve(ctx, organizationID, key, version)
	if err != nil {
		return Item{}, err
	}
	cp := copyOf(src)
	if !check.Blank(name) {
		cp.Name = name
	}
	return l.insert(ctx, memberID, organizationID, cp, Authored, "forked", "from "+origin(src))
}

func origin(it Item) string {
	if it.Shared() {
		return "shared " + it.Key + "@" + it.Version
	}
	return it.OrganizationID + " " + it.Key + "@" + it.Version
}

// copyOf is a private copy of it with its content, not its identity or source.
func copyOf(it Item) Item {
	cp := it
	cp.Visibility, cp.Source, cp.Warnings = PrivateToOrg, Source{}, nil
	return cp
}

// Publish lists the organization's authored, Published version on the marketplace (manage
// capability). It returns NotFound, and Invalid for a version that is not Published or not
// authored by the organization.
func (l *Library) Publish(ctx context.Context, memberID, organizationID, key, version string) (Item, error) {
	return l.setVisibility(ctx, memberID, organizationID, key, version, "published", func(it *Item) error {
		if it.Origin != Authored {
			return apperr.Invalidf("Only a %s the organization authored can be listed.", l.r.noun)
		}
		if it.Status != Published {
			return apperr.Invalidf("Only a Published %s can be listed.", l.r.noun)
		}
		it.Visibility = Public
		return nil
	})
}

// Unpublish withdraws the listing of the organization's version (manage capability); NotFound
// when it has no such version.
func (l *Library) Unpublish(ctx context.Context, memberID, organizationID, key, version string) (Item, error) {
	return l.setVisibility(ctx, memberID, organizationID, key, version, "unpublished", func(it *Item) error {
		it.Visibility = PrivateToOrg
		return nil
	})
}

func (l *Library) setVisibility(ctx context.Context, memberID, organizationID, key, version, verb string, fn func(*Item) error) (Item, error) {
	if err := l.require(ctx, memberID, organizationID, l.r.manage); err != nil {
		return Item{}, err
	}
	if check.Blank(version) {
		return Item{}, apperr.Invalidf("version is required.")
	}
	return l.s.d.Store.Update(ctx, l.r.kind, organizationID, key, version, l.NotFound(), func(it *Item) (audit.Entry, error) {
		if err := fn(it); err != nil {
			return audit.Entry{}, err
		}
		it.UpdatedAt = l.s.d.Now()
		return audit.New(organizationID, memberID, l.r.action+"."+verb, l.r.entity, it.ID, it.Key+"@"+it.Version), nil
	})
}

// listed is the marketplace rule: another organization's authored, Public, Published item.
func (l *Library) listed(organizationID string) Listed {
	return Listed{Kind: l.r.kind, ExceptOrg: organizationID, Origin: Authored, Visibility: Public, Status: Published}
}

func (ls Listed) has(it Item) bool {
	return it.Kind == ls.Kind && !it.Shared() && it.OrganizationID != ls.ExceptOrg &&
		it.Origin == ls.Origin && it.Visibility == ls.Visibility && it.Status == ls.Status
}

// Marketplace returns a page of other organizations' listed items (browse capability), each
// flagged when the organization already has its key and version.
func (l *Library) Marketplace(ctx context.Context, memberID, organizationID string, p Page) ([]Listing, error) {
	if err := l.require(ctx, memberID, organizationID, l.r.browse); err != nil {
		return nil, err
	}
	items, err := l.s.d.Store.Marketplace(ctx, l.listed(organizationID), p)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = identity(it)
	}
	owned, err := l.s.d.Store.Owned(ctx, l.r.kind, organizationID, ids)
	out := make([]Listing, len(items))
	for i, it := range items {
		out[i] = Listing{Item: it, AlreadyInLibrary: owned[ids[i]]}
	}
	return out, err
}

func identity(it Item) string { return it.Key + "\x00" + it.Version }

// Install copies a listed item into the organization as a private Installed item (manage
// capability). It returns NotFound for an id that is not listed, Invalid for the
// organization's own item, and Conflict when the organization has its key and version (also
// when two installs race); it never overwrites.
func (l *Library) Install(ctx context.Context, memberID, organizationID, id string) (Item, error) {
	if err := l.require(ctx, memberID, organizationID, l.r.manage); err != nil {
		return Item{}, err
	}
	src, err := l.s.d.Store.Item(ctx, l.r.kind, id)
	if apperr.Is(err, apperr.NotFound) {
		return Item{}, l.NotFound()
	}
	if err != nil {
		return Item{}, err
	}
	if src.OrganizationID == organizationID {
		return Item{}, apperr.Invalidf("An organization cannot install its own %s.", l.r.noun)
	}
	if !l.listed(organizationID).has(src) {
		return Item{}, l.NotFound()
	}
	return l.insert(ctx, memberID, organizationID, copyOf(src), Installed, "installed", "from "+origin(src))
}

// Apply sets the product's identity to the body of the organization's (or the shared) product
// profile version (owner-level). It returns NotFound for an unknown profile or product.
func (l *Library) Apply(ctx context.Context, memberID, organizationID, key, version, productID string) (Item, error) {
	if err := l.require(ctx, memberID, organizationID, l.r.manage); err != nil {
		return Item{}, err
	}
	if check.Blank(version) {
		return Item{}, apperr.Invalidf("version is required.")
	}
	it, err := l.Resolve(ctx, organizationID, key, version)
	if err != nil {
		return Item{}, err
	}
	e := audit.New(organizationID, memberID, l.r.action+".applied", "Product", productID, it.Key+"@"+it.Version)
	return it, l.s.d.Products.SetIdentity(ctx, organizationID, productID, it.Body, e)
}

// Index stores a document as a shared starter item with the admin key (compared in constant
// time). It returns Forbidden without a configured or a matching key, and Invalid for blank
// content or a malformed document.
func (l *Library) Index(ctx context.Context, adminKey, content string, src Source) (Item, error) {
	if err := l.s.admin(adminKey); err != nil {
		return Item{}, err
	}
	return l.IndexShared(ctx, content, src)
}

// IndexShared parses a document and stores it as a shared starter item, for callers the
// service trusts (seeders); Index is the admin-key door. It returns Invalid for blank content or
// a malformed document.
func (l *Library) IndexShared(ctx context.Context, content string, src Source) (Item, error) {
	if check.Blank(content) {
		return Item{}, apperr.Invalidf("content is required.")
	}
	it, err := Parse(content, src)
	if err != nil {
		return Item{}, err
	}
	stored, err := l.s.storeShared(ctx, l.r.kind, it)
	if err == nil {
		l.s.d.Log.InfoContext(ctx, "shared library item indexed", "kind", stored.Kind, "key", stored.Key, "version", stored.Version,
			"status", stored.Status, "repo", src.Repo, "path", src.Path, "commit", src.Commit)
	}
	return stored, err
}

// storeShared makes it a shared Builtin item, derives its status, embeds it and upserts it.
func (s *Service) storeShared(ctx context.Context, kind Kind, it Item) (Item, error) {
	s.asShared(ctx, kind, &it)
	stored, err := s.d.Store.UpsertShared(ctx, []Item{it})
	if err != nil {
		return Item{}, err
	}
	stored[0].Warnings = it.Warnings
	return stored[0], nil
}

// asShared makes it a new shared Builtin item of the kind with its status and embedding. An
// item whose version is its source commit is created at the commit's time when the source
// names it (a sync), else at the time it is indexed, so the resolution order can tell the
// newer commit.
func (s *Service) asShared(ctx context.Context, kind Kind, it *Item) {
	s.asSharedWith(ctx, kind, it, nil)
}

// asSharedWith is asShared that reuses embedding, when there is one, instead of computing it:
// a sync's file whose content did not change keeps the vector it had.
func (s *Service) asSharedWith(ctx context.Context, kind Kind, it *Item, embedding []float32) {
	now := s.d.Now()
	it.ID, it.Kind, it.OrganizationID, it.Origin, it.CreatedAt, it.UpdatedAt = s.d.NewID(), kind, "", Builtin, now, now
	if it.commitVersion() && !it.Source.At.IsZero() {
		it.CreatedAt = it.Source.At
	}
	if embedding == nil {
		s.prepare(ctx, it)
		return
	}
	it.derive()
	it.Embedding = embedding
}

// admin checks the platform admin key in constant time.
func (s *Service) admin(key string) error {
	if s.d.AdminKey == "" || subtle.ConstantTimeCompare([]byte(key), []byte(s.d.AdminKey)) != 1 {
		return access.Forbidden()
	}
	return nil
}
