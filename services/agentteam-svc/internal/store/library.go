package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
)

// Library implements library.Store.
type Library struct{ db *gorm.DB }

// NewLibrary returns a Library store.
func NewLibrary(db *gorm.DB) *Library { return &Library{db: db} }

type libraryItemModel struct {
	ID              string `gorm:"primaryKey"`
	Kind            string
	OrganizationID  *string
	Key             string
	Name            string
	Version         string
	Summary         string
	Roles           []string `gorm:"serializer:json"`
	Inputs          string
	Outputs         string
	Actions         []actionJSON `gorm:"serializer:json"`
	Tools           []string     `gorm:"serializer:json"`
	Context         []string     `gorm:"serializer:json"`
	Visibility      string
	MinTier         string
	Status          string
	Origin          string
	GoldenTests     []goldenTestJSON `gorm:"serializer:json"`
	GoldenTestCount int
	Body            string
	License         string
	Compatibility   string
	Metadata        map[string]string `gorm:"serializer:json"`
	SourceRepo      string
	SourcePath      string
	SourceCommit    string
	ContentHash     string
	Embedding       []float32 `gorm:"serializer:json"`
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

func (libraryItemModel) TableName() string { return "library_items" }

type actionJSON struct {
	Name        string `json:"name"`
	Risk        string `json:"risk"`
	Description string `json:"description"`
}

type goldenTestJSON struct {
	Input    string `json:"input"`
	Expected string `json:"expected"`
}

// summaryColumns are what a list shows: everything but the body and the embedding.
var summaryColumns = []string{
	"id", "kind", "organization_id", "key", "name", "version", "summary", "roles", "inputs", "outputs", "actions", "tools",
	"context", "visibility", "min_tier", "status", "origin", "golden_tests", "golden_test_count", "license", "compatibility",
	"metadata", "source_repo", "source_path", "source_commit", "created_at", "updated_at",
}

func toLibraryModel(it library.Item) *libraryItemModel {
	m := &libraryItemModel{
		ID: it.ID, Kind: string(it.Kind), Key: it.Key, Name: it.Name, Version: it.Version, Summary: it.Summary,
		Roles: orEmpty(it.Roles), Inputs: it.Inputs, Outputs: it.Outputs, Tools: orEmpty(it.Tools), Context: orEmpty(it.Context),
		Visibility: string(it.Visibility), MinTier: it.MinTier, Status: string(it.Status), Origin: string(it.Origin),
		GoldenTestCount: len(it.GoldenTests), Body: it.Body, License: it.License, Compatibility: it.Compatibility,
		Metadata: it.Metadata, SourceRepo: it.Source.Repo, SourcePath: it.Source.Path, SourceCommit: it.Source.Commit,
		ContentHash: it.Source.Hash, Embedding: it.Embedding, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt,
		Actions: make([]actionJSON, len(it.Actions)), GoldenTests: make([]goldenTestJSON, len(it.GoldenTests)),
	}
	if it.OrganizationID != "" {
		m.OrganizationID = &it.OrganizationID
	}
	if m.Metadata == nil {
		m.Metadata = map[string]string{}
	}
	for i, a := range it.Actions {
		m.Actions[i] = actionJSON(a)
	}
	for i, t := range it.GoldenTests {
		m.GoldenTests[i] = goldenTestJSON(t)
	}
	return m
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (m libraryItemModel) toDomain() library.Item {
	it := library.Item{
		ID: m.ID, Kind: library.Kind(m.Kind), Key: m.Key, Name: m.Name, Version: m.Version, Summary: m.Summary,
		Roles: m.Roles, Inputs: m.Inputs, Outputs: m.Outputs, Tools: m.Tools, Context: m.Context,
		Visibility: library.Visibility(m.Visibility), MinTier: m.MinTier, Status: library.Status(m.Status),
		Origin: library.Origin(m.Origin), Body: m.Body, License: m.License, Compatibility: m.Compatibility,
		Metadata: m.Metadata, Source: library.Source{Repo: m.SourceRepo, Path: m.SourcePath, Commit: m.SourceCommit, Hash: m.ContentHash},
		Embedding: m.Embedding, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
		Actions: make([]library.Action, len(m.Actions)), GoldenTests: make([]library.GoldenTest, len(m.GoldenTests)),
	}
	if m.OrganizationID != nil {
		it.OrganizationID = *m.OrganizationID
	}
	for i, a := range m.Actions {
		it.Actions[i] = library.Action(a)
	}
	for i, t := range m.GoldenTests {
		it.GoldenTests[i] = library.GoldenTest(t)
	}
	return it
}

func toItems(rows []libraryItemModel) []library.Item {
	out := make([]library.Item, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out
}

// filtered selects the query's kind with its role and visibility filters.
func (s *Library) filtered(ctx context.Context, q library.Query) *gorm.DB {
	tx := s.db.WithContext(ctx).Model(&libraryItemModel{}).Where("kind = ?", string(q.Kind))
	if q.Role != "" {
		role, _ := json.Marshal([]string{q.Role})
		tx = tx.Where("roles @> ?::jsonb", string(role))
	}
	if q.Visibility != "" {
		tx = tx.Where("visibility = ?", string(q.Visibility))
	}
	return tx
}

// scope selects the query's rows: the shared items plus the organization's own, filtered.
func (s *Library) scope(ctx context.Context, q library.Query) *gorm.DB {
	if q.OrganizationID == "" {
		return s.filtered(ctx, q).Where("organization_id IS NULL")
	}
	return s.filtered(ctx, q).Where("(organization_id IS NULL OR organization_id = ?)", q.OrganizationID)
}

// pageKeys selects a page of the distinct keys q selects, in byte order: the shared keys and
// the organization's are read as two ordered index-only scans (library_items_shared_keys_idx,
// library_items_keys_idx), each cut at the page's end, and merged.
func (s *Library) pageKeys(ctx context.Context, q library.Query, p library.Page) *gorm.DB {
	branch := func(owner string, args ...any) *gorm.DB {
		return s.filtered(ctx, q).Where(owner, args...).Distinct(`key COLLATE "C" AS key`).Order("1").Limit(p.Offset + p.Limit)
	}
	shared := branch("organization_id IS NULL")
	own := shared
	if q.OrganizationID != "" {
		own = branch("organization_id = ?", q.OrganizationID)
	}
	return s.db.WithContext(ctx).Raw(`SELECT key FROM ((?) UNION (?)) k ORDER BY key OFFSET ? LIMIT ?`, shared, own, p.Offset, p.Limit)
}

// listColumns are what a list item carries: what a summary shows and what the resolution
// order reads.
const listColumns = `id, kind, organization_id, key, name, version, summary, roles, actions, visibility, min_tier, status,
	origin, golden_tests, source_commit, created_at`

// List returns every item q selects with a key of the page, in one statement (the page's keys
// become an array the key index is probed with: a join would read every row of the scope), in
// the library's order.
func (s *Library) List(ctx context.Context, q library.Query, p library.Page) ([]library.Item, error) {
	rows, err := s.scope(ctx, q).Select(listColumns).Where(`key COLLATE "C" = ANY (ARRAY(?))`, s.pageKeys(ctx, q, p)).Rows()
	if err != nil {
		return nil, pgdb.Translate(err, "library item")
	}
	defer rows.Close()
	var out []library.Item
	for rows.Next() {
		it, err := scanListed(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	library.Order(out)
	return out, pgdb.Translate(rows.Err(), "library item")
}

// scanListed reads one row of listColumns, decoding its three JSON columns itself rather than
// through gorm's reflection over the whole model (which took half of a list's CPU).
func scanListed(rows *sql.Rows) (library.Item, error) {
	var (
		m                           libraryItemModel
		roles, actions, goldenTests []byte
	)
	err := rows.Scan(&m.ID, &m.Kind, &m.OrganizationID, &m.Key, &m.Name, &m.Version, &m.Summary, &roles, &actions,
		&m.Visibility, &m.MinTier, &m.Status, &m.Origin, &goldenTests, &m.SourceCommit, &m.CreatedAt)
	if err != nil {
		return library.Item{}, pgdb.Translate(err, "library item")
	}
	err = errors.Join(json.Unmarshal(roles, &m.Roles), json.Unmarshal(actions, &m.Actions), json.Unmarshal(goldenTests, &m.GoldenTests))
	if err != nil {
		return library.Item{}, fmt.Errorf("store: decode library item %s: %w", m.ID, err)
	}
	return m.toDomain(), nil
}

// Items returns every item q selects with one of the keys, with bodies and embeddings, in the
// library's order.
func (s *Library) Items(ctx context.Context, q library.Query, keys []string) ([]library.Item, error) {
	var rows []libraryItemModel
	if err := s.scope(ctx, q).Where("key IN ?", keys).Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "library item")
	}
	items := toItems(rows)
	library.Order(items)
	return items, nil
}

// Item returns NotFound for an unknown id of the kind.
func (s *Library) Item(ctx context.Context, kind library.Kind, id string) (library.Item, error) {
	var m libraryItemModel
	err := s.db.WithContext(ctx).Where("id = ? AND kind = ?", id, string(kind)).Take(&m).Error
	return m.toDomain(), pgdb.Translate(err, "library item")
}

func (s *Library) identity(tx *gorm.DB, kind library.Kind, organizationID, key, version string) *gorm.DB {
	tx = tx.Where("kind = ? AND key = ? AND version = ?", string(kind), key, version)
	if organizationID == "" {
		return tx.Where("organization_id IS NULL")
	}
	return tx.Where("organization_id = ?", organizationID)
}

// Version returns the organization's (or the shared) item of key and version.
func (s *Library) Version(ctx context.Context, kind library.Kind, organizationID, key, version string) (library.Item, bool, error) {
	var rows []libraryItemModel
	err := s.identity(s.db.WithContext(ctx), kind, organizationID, key, version).Limit(1).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return library.Item{}, false, pgdb.Translate(err, "library item")
	}
	return rows[0].toDomain(), true, nil
}

// Insert stores a new item with its audit entry; Conflict when its identity exists.
func (s *Library) Insert(ctx context.Context, it library.Item, e audit.Entry) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := tx.Create(toLibraryModel(it)).Error; err != nil {
			return pgdb.Translate(err, "library item")
		}
		return writeAudit(tx, e)
	})
}

// identityColumns are the conflict target of the identity index.
var identityColumns = []clause.Column{{Name: "kind"}, {Name: "organization_id"}, {Name: "key"}, {Name: "version"}}

// UpsertShared stores shared items in one statement, replacing the content (not the id or
// creation time) of those with the same kind, key and version.
func (s *Library) UpsertShared(ctx context.Context, items []library.Item) ([]library.Item, error) {
	rows := make([]*libraryItemModel, len(items))
	for i, it := range items {
		rows[i] = toLibraryModel(it)
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns: identityColumns,
		DoUpdates: clause.AssignmentColumns([]string{
			"name", "summary", "roles", "inputs", "outputs", "actions", "tools", "context", "visibility", "min_tier", "status",
			"origin", "golden_tests", "golden_test_count", "body", "license", "compatibility", "metadata", "source_repo",
			"source_path", "source_commit", "content_hash", "embedding", "updated_at",
		}),
	}, clause.Returning{}).Create(rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "library item")
	}
	out := make([]library.Item, len(rows))
	for i, m := range rows {
		out[i] = m.toDomain()
	}
	return out, nil
}

// SeedShared inserts the items whose identity is free and leaves the others alone.
func (s *Library) SeedShared(ctx context.Context, items []library.Item) error {
	if len(items) == 0 {
		return nil
	}
	rows := make([]*libraryItemModel, len(items))
	for i, it := range items {
		rows[i] = toLibraryModel(it)
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{Columns: identityColumns, DoNothing: true}).Create(rows).Error
	return pgdb.Translate(err, "library item")
}

// Update locks the organization's item of key and version, lets fn change it and saves it with
// fn's audit entry in one transaction.
func (s *Library) Update(ctx context.Context, kind library.Kind, organizationID, key, version string, notFound error,
	fn func(*library.Item) (audit.Entry, error)) (library.Item, error) {
	var it library.Item
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var m libraryItemModel
		err := s.identity(tx.Clauses(clause.Locking{Strength: "UPDATE"}), kind, organizationID, key, version).Take(&m).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return notFound
		}
		if err != nil {
			return pgdb.Translate(err, "library item")
		}
		it = m.toDomain()
		e, err := fn(&it)
		if err != nil {
			return err
		}
		if err := tx.Save(toLibraryModel(it)).Error; err != nil {
			return pgdb.Translate(err, "library item")
		}
		return writeAudit(tx, e)
	})
	return it, err
}

// Marketplace returns a page of the rows l selects, by key then newest version.
func (s *Library) Marketplace(ctx context.Context, l library.Listed, p library.Page) ([]library.Item, error) {
	var rows []libraryItemModel
	err := s.db.WithContext(ctx).Select(summaryColumns).
		Where("kind = ? AND organization_id IS NOT NULL AND organization_id <> ? AND origin = ? AND visibility = ? AND status = ?",
			string(l.Kind), l.ExceptOrg, string(l.Origin), string(l.Visibility), string(l.Status)).
		Order(`key COLLATE "C", version COLLATE "C" DESC, id`).Offset(p.Offset).Limit(p.Limit).Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "library item")
	}
	return toItems(rows), nil
}

// Owned reports which "key\x00version" identities the organization has.
func (s *Library) Owned(ctx context.Context, kind library.Kind, organizationID string, identities []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(identities) == 0 {
		return out, nil
	}
	pairs := make([][]any, len(identities))
	for i, id := range identities {
		key, version, _ := strings.Cut(id, "\x00")
		pairs[i] = []any{key, version}
	}
	var rows []struct{ Key, Version string }
	err := s.db.WithContext(ctx).Model(&libraryItemModel{}).Select("key, version").
		Where("kind = ? AND organization_id = ? AND (key, version) IN ?", string(kind), organizationID, pairs).
		Scan(&rows).Error
	for _, r := range rows {
		out[r.Key+"\x00"+r.Version] = true
	}
	return out, pgdb.Translate(err, "library item")
}

// SharedFrom returns the shared items of the kind read from repo: their identity, path, content
// hash and embedding, without bodies.
func (s *Library) SharedFrom(ctx context.Context, kind library.Kind, repo string) ([]library.Item, error) {
	var rows []libraryItemModel
	err := s.db.WithContext(ctx).Select("id", "key", "version", "source_path", "content_hash", "embedding").
		Where("kind = ? AND organization_id IS NULL AND source_repo = ?", string(kind), repo).Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "library item")
	}
	return toItems(rows), nil
}

// Delete removes the items.
func (s *Library) Delete(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return pgdb.Translate(s.db.WithContext(ctx).Where("id IN ?", ids).Delete(&libraryItemModel{}).Error, "library item")
}
