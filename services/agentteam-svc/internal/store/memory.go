package store

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// Memory implements memory.Store and memory.AnalyticsStore.
type Memory struct{ db *gorm.DB }

// NewMemory returns a Memory store.
func NewMemory(db *gorm.DB) *Memory { return &Memory{db: db} }

type memoryEntryModel struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	TeamID         string
	Kind           string
	Content        string
	RunID          *string
	AgentID        *string
	EditDistance   *int
	CreatedBy      *string
	Embedder       string
	Vector         []byte
	Version        int64
	CreatedAt      time.Time
	DeletedVersion *int64
	DeletedAt      *time.Time
}

func (memoryEntryModel) TableName() string { return "memory_entries" }

func (m memoryEntryModel) toDomain() memory.Entry {
	e := memory.Entry{
		ID: m.ID, OrganizationID: m.OrganizationID, TeamID: m.TeamID, Kind: memory.Kind(m.Kind), Content: m.Content,
		RunID: m.RunID, AgentID: m.AgentID, EditDistance: m.EditDistance, CreatedAt: m.CreatedAt,
	}
	if m.CreatedBy != nil {
		e.CreatedBy = *m.CreatedBy
	}
	return e
}

// entryColumns are the columns of an entry without its vector.
var entryColumns = []string{"id", "organization_id", "team_id", "kind", "content", "run_id", "agent_id", "edit_distance", "created_by", "created_at"}

type memoryTeamVersionModel struct {
	TeamID  string `gorm:"primaryKey"`
	Version int64
}

func (memoryTeamVersionModel) TableName() string { return "memory_team_versions" }

// bumpVersion increments the team's memory version inside tx and returns it; the row lock it
// takes orders the team's writers, so versions commit in order.
func bumpVersion(tx *gorm.DB, teamID string) (int64, error) {
	m := memoryTeamVersionModel{TeamID: teamID, Version: 1}
	err := tx.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "team_id"}},
		DoUpdates: clause.Assignments(map[string]any{"version": gorm.Expr("memory_team_versions.version + 1")}),
	}, clause.Returning{Columns: []clause.Column{{Name: "version"}}}).Create(&m).Error
	return m.Version, pgdb.Translate(err, "memory version")
}

// Create inserts the entry, bumps the team's version and writes the audit entry in one
// transaction; Conflict when the entry's run has an entry already.
func (s *Memory) Create(ctx context.Context, e memory.Entry, v memory.Vector, a audit.Entry) (int64, error) {
	var version int64
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var err error
		version, err = createEntry(tx, e, v, a)
		return err
	})
	return version, err
}

// Import inserts many entries of one team, each with its vector and audit entry, in one
// transaction (bulk loading, such as the benchmark's seed); it returns the team's last version.
func (s *Memory) Import(ctx context.Context, entries []memory.Entry, vectors []memory.Vector, audits []audit.Entry) (int64, error) {
	var version int64
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		for i, e := range entries {
			var err error
			if version, err = createEntry(tx, e, vectors[i], audits[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return version, err
}

func createEntry(tx *gorm.DB, e memory.Entry, v memory.Vector, a audit.Entry) (int64, error) {
	version, err := bumpVersion(tx, e.TeamID)
	if err != nil {
		return 0, err
	}
	m := memoryEntryModel{
		ID: e.ID, OrganizationID: e.OrganizationID, TeamID: e.TeamID, Kind: string(e.Kind), Content: e.Content,
		RunID: e.RunID, AgentID: e.AgentID, EditDistance: e.EditDistance, Embedder: v.Embedder,
		Vector: encodeVector(v.Values), Version: version, CreatedAt: e.CreatedAt,
	}
	if e.CreatedBy != "" {
		m.CreatedBy = &e.CreatedBy
	}
	if err := tx.Create(&m).Error; err != nil {
		return 0, pgdb.Translate(err, "memory entry")
	}
	return version, writeAudit(tx, a)
}

// Entry returns memory.EntryNotFound for an unknown or deleted id.
func (s *Memory) Entry(ctx context.Context, id string) (memory.Entry, error) {
	var m memoryEntryModel
	err := s.db.WithContext(ctx).Select(entryColumns).Where("id = ? AND deleted_at IS NULL", id).Take(&m).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return memory.Entry{}, memory.EntryNotFound()
	}
	if err != nil {
		return memory.Entry{}, pgdb.Translate(err, "memory entry")
	}
	return m.toDomain(), nil
}

// Entries lists the team's live entries, newest first.
func (s *Memory) Entries(ctx context.Context, teamID string, p org.Page) ([]memory.Entry, error) {
	var rows []memoryEntryModel
	err := s.db.WithContext(ctx).Select(entryColumns).Where("team_id = ? AND deleted_at IS NULL", teamID).
		Order("created_at DESC, id DESC").Offset(p.Offset).Limit(p.Limit).Find(&rows).Error
	return toEntries(rows), pgdb.Translate(err, "memory entry")
}

// EntriesByID returns the live entries among ids.
func (s *Memory) EntriesByID(ctx context.Context, ids []string) ([]memory.Entry, error) {
	var rows []memoryEntryModel
	err := s.db.WithContext(ctx).Select(entryColumns).Where("id IN ? AND deleted_at IS NULL", ids).Find(&rows).Error
	return toEntries(rows), pgdb.Translate(err, "memory entry")
}

func toEntries(rows []memoryEntryModel) []memory.Entry {
	out := make([]memory.Entry, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out
}

// Delete erases the entry's content and vector, marks it deleted at the team's next version
// and writes the audit entry in one transaction; memory.EntryNotFound when it is gone already.
func (s *Memory) Delete(ctx context.Context, id string, a audit.Entry) (int64, error) {
	var version int64
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var m memoryEntryModel
		err := tx.Select("id", "team_id").Where("id = ? AND deleted_at IS NULL", id).Take(&m).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return memory.EntryNotFound()
		}
		if err != nil {
			return pgdb.Translate(err, "memory entry")
		}
		if version, err = bumpVersion(tx, m.TeamID); err != nil {
			return err
		}
		res := tx.Model(&memoryEntryModel{}).Where("id = ? AND deleted_at IS NULL", id).Updates(map[string]any{
			"content": "", "vector": nil, "deleted_version": version, "deleted_at": a.CreatedAt,
		})
		if res.Error != nil {
			return pgdb.Translate(res.Error, "memory entry")
		}
		if res.RowsAffected == 0 {
			return memory.EntryNotFound()
		}
		return writeAudit(tx, a)
	})
	return version, err
}

// IndexVersion returns the team's memory version, 0 when it never had an entry.
func (s *Memory) IndexVersion(ctx context.Context, teamID string) (int64, error) {
	var versions []int64
	err := s.db.WithContext(ctx).Model(&memoryTeamVersionModel{}).Where("team_id = ?", teamID).Limit(1).Pluck("version", &versions).Error
	if err != nil {
		return 0, pgdb.Translate(err, "memory version")
	}
	if len(versions) == 0 {
		return 0, nil
	}
	return versions[0], nil
}

// IndexDelta reads the team's version, then the live entries of the embedder inserted after
// since and the entries deleted after since. Reading the version first means the delta may hold
// newer changes too, which is harmless: applying a change twice is a no-op.
func (s *Memory) IndexDelta(ctx context.Context, teamID, embedder string, since int64) (memory.Delta, error) {
	version, err := s.IndexVersion(ctx, teamID)
	if err != nil {
		return memory.Delta{}, err
	}
	d := memory.Delta{Version: version}
	rows, err := s.db.WithContext(ctx).Model(&memoryEntryModel{}).Select("id", "vector").
		Where("team_id = ? AND version > ? AND deleted_at IS NULL AND embedder = ?", teamID, since, embedder).Rows()
	if err != nil {
		return d, pgdb.Translate(err, "memory entry")
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return d, pgdb.Translate(err, "memory entry")
		}
		d.Upserts = append(d.Upserts, memory.Vector{EntryID: id, Embedder: embedder, Values: decodeVector(raw)})
	}
	if err := rows.Err(); err != nil {
		return d, pgdb.Translate(err, "memory entry")
	}
	if since > 0 {
		err = s.db.WithContext(ctx).Model(&memoryEntryModel{}).
			Where("team_id = ? AND deleted_version > ?", teamID, since).Pluck("id", &d.Deletes).Error
	}
	return d, pgdb.Translate(err, "memory entry")
}

// encodeVector stores a vector as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
