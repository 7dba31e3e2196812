package store

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
	"github.com/motionstudio/platform/services/identity-svc/internal/apikey"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
)

// APIKeys implements apikey.Store.
type APIKeys struct {
	db     *gorm.DB
	outbox *outbox.Writer
}

// NewAPIKeys returns an APIKeys store writing its events through w.
func NewAPIKeys(db *gorm.DB, w *outbox.Writer) *APIKeys { return &APIKeys{db: db, outbox: w} }

type apiKeyRow struct {
	ID           string `gorm:"primaryKey"`
	TenantID     string
	Name         string
	Environment  string
	KeyPrefix    string
	Last4        string
	KeyHash      string
	Scopes       jsonList `gorm:"type:jsonb"`
	AllowedIps   jsonList `gorm:"type:jsonb"`
	RateLimitRpm int
	IsActive     bool
	ExpiresAt    *time.Time
	LastUsedAt   *time.Time
	UsageCount   int64
	CreatedBy    *string
	CreatedAt    time.Time
	RevokedAt    *time.Time
	// TenantStatus is read by ByHash only.
	TenantStatus string `gorm:"->"`
}

func (apiKeyRow) TableName() string { return "api_keys" }

func (m apiKeyRow) toDomain() *apikey.Key {
	k := &apikey.Key{
		ID: m.ID, TenantID: m.TenantID, Name: m.Name, Environment: m.Environment, Prefix: m.KeyPrefix,
		Last4: m.Last4, Hash: m.KeyHash, Scopes: []string(m.Scopes), AllowedIPs: []string(m.AllowedIps),
		RateLimitRPM: m.RateLimitRpm, Active: m.IsActive, ExpiresAt: m.ExpiresAt, LastUsedAt: m.LastUsedAt,
		UsageCount: m.UsageCount, CreatedAt: m.CreatedAt, RevokedAt: m.RevokedAt,
	}
	if m.CreatedBy != nil {
		k.CreatedBy = *m.CreatedBy
	}
	if k.AllowedIPs == nil {
		k.AllowedIPs = []string{}
	}
	return k
}

// Create inserts k and identity.api_key.created.v1 in one transaction; apperr Conflict when
// the tenant has too many active keys, NotFound when the tenant does not exist.
func (s *APIKeys) Create(ctx context.Context, k *apikey.Key) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		active := tx.Model(&apiKeyRow{}).Where("tenant_id = ? AND is_active", k.TenantID)
		if err := lockTenantBelow(tx, k.TenantID, active, apikey.MaxActivePerTenant, "api key",
			apperr.E(apperr.Conflict, "too_many_keys", "the tenant already has 50 active API keys; revoke one first")); err != nil {
			return err
		}
		m := apiKeyRow{
			ID: k.ID, TenantID: k.TenantID, Name: k.Name, Environment: k.Environment, KeyPrefix: k.Prefix,
			Last4: k.Last4, KeyHash: k.Hash, Scopes: jsonList(k.Scopes), AllowedIps: jsonList(k.AllowedIPs),
			RateLimitRpm: k.RateLimitRPM, IsActive: true, ExpiresAt: k.ExpiresAt, CreatedAt: k.CreatedAt,
		}
		if k.CreatedBy != "" {
			m.CreatedBy = &k.CreatedBy
		}
		if err := tx.Create(&m).Error; err != nil {
			return pgdb.Translate(err, "api key")
		}
		_, err := s.outbox.Add(ctx, tx, events.SubjectApiKeyCreated, events.SubjectApiKeyCreated, &identityv1.ApiKeyCreated{
			ApiKeyId: k.ID, TenantId: k.TenantID, Name: k.Name, Environment: k.Environment, KeyPrefix: k.Prefix,
			Last4: k.Last4, Scopes: k.Scopes, AllowedIps: k.AllowedIPs, RateLimitRpm: int32(k.RateLimitRPM), // #nosec G115 -- validated to at most MaxRateLimitRPM (100000)
			CreatedBy: k.CreatedBy, ExpiresAt: optionalTimestamp(k.ExpiresAt), CreatedAt: timestamppb.New(k.CreatedAt),
		})
		return err
	})
}

// List answers the tenant's newest keys.
func (s *APIKeys) List(ctx context.Context, tenantID string, limit int) ([]*apikey.Key, error) {
	var rows []apiKeyRow
	if err := s.db.WithContext(ctx).Where("tenant_id = ?", tenantID).Order("created_at DESC, id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "api keys")
	}
	out := make([]*apikey.Key, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// Get finds a key of the tenant; apperr NotFound when there is none.
func (s *APIKeys) Get(ctx context.Context, tenantID, id string) (*apikey.Key, error) {
	var m apiKeyRow
	if err := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenantID, id).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "api key")
	}
	return m.toDomain(), nil
}

// ByHash finds a key by the hash of its secret, with whether its tenant is open; apperr NotFound
// when there is none.
func (s *APIKeys) ByHash(ctx context.Context, hash string) (*apikey.Key, error) {
	var m apiKeyRow
	err := s.db.WithContext(ctx).Select("api_keys.*, (SELECT status FROM tenants WHERE tenants.id = api_keys.tenant_id) AS tenant_status").
		Where("key_hash = ?", hash).Take(&m).Error
	if err != nil {
		return nil, pgdb.Translate(err, "api key")
	}
	k := m.toDomain()
	k.TenantOpen = (&tenant.Tenant{Status: m.TenantStatus}).Open()
	return k, nil
}

// Revoke deactivates k and writes identity.api_key.revoked.v1 in one transaction; false when
// it was already revoked.
func (s *APIKeys) Revoke(ctx context.Context, k *apikey.Key, r apikey.Revocation) (bool, error) {
	revoked := false
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var by *string
		if r.By != "" {
			by = &r.By
		}
		res := tx.Exec(`UPDATE api_keys SET is_active = false, revoked_at = ?, revoked_by = ?, revoke_reason = ?
			WHERE id = ? AND is_active`, r.At, by, r.Reason, k.ID)
		if res.Error != nil {
			return pgdb.Translate(res.Error, "api key")
		}
		if res.RowsAffected == 0 {
			return nil
		}
		revoked = true
		_, err := s.outbox.Add(ctx, tx, events.SubjectApiKeyRevoked, events.SubjectApiKeyRevoked, &identityv1.ApiKeyRevoked{
			ApiKeyId: k.ID, TenantId: k.TenantID, KeyPrefix: k.Prefix, Last4: k.Last4, Reason: r.Reason,
			RevokedBy: r.By, RevokedAt: timestamppb.New(r.At),
		})
		return err
	})
	return revoked, err
}

// AddUsage adds use counts and last-use times to keys, and API calls to their tenants' days, in
// two statements whatever the number of keys (a flush after a busy interval holds thousands).
// Keys are updated in id order, so two replicas flushing at once lock them in the same order.
func (s *APIKeys) AddUsage(ctx context.Context, usage []apikey.Usage) error {
	if len(usage) == 0 {
		return nil
	}
	usage = slices.SortedFunc(slices.Values(usage), func(a, b apikey.Usage) int { return strings.Compare(a.KeyID, b.KeyID) })
	ids, counts, times := make([]string, len(usage)), make([]string, len(usage)), make([]string, len(usage))
	type tenantDay struct{ tenantID, date string }
	calls := map[tenantDay]int64{}
	for i, u := range usage {
		ids[i], counts[i], times[i] = u.KeyID, strconv.FormatInt(u.Count, 10), u.LastUsedAt.UTC().Format(time.RFC3339Nano)
		calls[tenantDay{u.TenantID, u.LastUsedAt.UTC().Format(time.DateOnly)}] += u.Count
	}
	days := slices.SortedFunc(maps.Keys(calls), func(a, b tenantDay) int {
		return cmp.Or(strings.Compare(a.tenantID, b.tenantID), strings.Compare(a.date, b.date))
	})
	tenants, dates, dayCalls := make([]string, len(days)), make([]string, len(days)), make([]string, len(days))
	for i, d := range days {
		tenants[i], dates[i], dayCalls[i] = d.tenantID, d.date, strconv.FormatInt(calls[d], 10)
	}
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		err := tx.Exec(`UPDATE api_keys k SET usage_count = k.usage_count + u.n,
				last_used_at = GREATEST(coalesce(k.last_used_at, u.at), u.at)
			FROM unnest(?::uuid[], ?::bigint[], ?::timestamptz[]) AS u (id, n, at) WHERE k.id = u.id`,
			arrayLiteral(ids), arrayLiteral(counts), arrayLiteral(times)).Error
		if err != nil {
			return pgdb.Translate(err, "api key usage")
		}
		err = tx.Exec(`INSERT INTO tenant_usage_days (tenant_id, usage_date, api_calls)
			SELECT * FROM unnest(?::uuid[], ?::date[], ?::bigint[])
			ON CONFLICT (tenant_id, usage_date) DO UPDATE SET api_calls = tenant_usage_days.api_calls + EXCLUDED.api_calls`,
			arrayLiteral(tenants), arrayLiteral(dates), arrayLiteral(dayCalls)).Error
		return pgdb.Translate(err, "tenant usage")
	})
}

// arrayLiteral writes values that hold no quote or backslash (ids, numbers, dates) as a Postgres
// array literal, every element quoted (an unquoted NULL would be a null element); gorm would
// expand a slice argument into a list.
func arrayLiteral(values []string) string { return `{"` + strings.Join(values, `","`) + `"}` }
