package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/identity-svc/internal/token"
)

// SigningKeys implements token.KeyStore.
type SigningKeys struct{ db *gorm.DB }

// NewSigningKeys returns a SigningKeys store.
func NewSigningKeys(db *gorm.DB) *SigningKeys { return &SigningKeys{db: db} }

type signingKey struct {
	Kid         string `gorm:"primaryKey"`
	Alg         string
	PrivateKey  []byte
	CreatedAt   time.Time
	ActivatesAt time.Time
}

func (signingKey) TableName() string { return "signing_keys" }

func (m signingKey) toDomain() token.SealedKey {
	return token.SealedKey{ID: m.Kid, Alg: m.Alg, Sealed: m.PrivateKey, CreatedAt: m.CreatedAt, ActivatesAt: m.ActivatesAt}
}

// signingKeysLock serializes key additions across replicas (pg_advisory_xact_lock).
const signingKeysLock = 0x6b657973 // "keys"

// List answers every key, oldest activation first.
func (s *SigningKeys) List(ctx context.Context) ([]token.SealedKey, error) {
	return s.list(s.db.WithContext(ctx))
}

func (s *SigningKeys) list(db *gorm.DB) ([]token.SealedKey, error) {
	var rows []signingKey
	if err := db.Order("activates_at, kid").Find(&rows).Error; err != nil {
		return nil, pgdb.Translate(err, "signing keys")
	}
	out := make([]token.SealedKey, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// AddIf adds k when cond holds for the keys stored, under a transaction-scoped advisory lock
// so that two replicas never both decide to add. A key already stored is left as it is.
func (s *SigningKeys) AddIf(ctx context.Context, k token.SealedKey, cond func([]token.SealedKey) bool) (bool, error) {
	added := false
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", signingKeysLock).Error; err != nil {
			return pgdb.Translate(err, "signing keys lock")
		}
		existing, err := s.list(tx)
		if err != nil || !cond(existing) {
			return err
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&signingKey{
			Kid: k.ID, Alg: k.Alg, PrivateKey: k.Sealed, CreatedAt: k.CreatedAt, ActivatesAt: k.ActivatesAt,
		})
		if res.Error != nil {
			return pgdb.Translate(res.Error, "signing key")
		}
		added = res.RowsAffected == 1
		return nil
	})
	return added, err
}
