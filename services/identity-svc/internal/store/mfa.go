package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

type mfaFactor struct {
	ID           string `gorm:"primaryKey"`
	UserID       string
	TenantID     string
	FactorType   string
	Label        string
	SecretSealed []byte
	PhoneNumber  *string
	VerifiedAt   *time.Time
	LastUsedStep int64
	CreatedAt    time.Time
}

func (mfaFactor) TableName() string { return "mfa_factors" }

func (m mfaFactor) toDomain() auth.Factor {
	f := auth.Factor{
		ID: m.ID, UserID: m.UserID, TenantID: m.TenantID, Type: m.FactorType, Label: m.Label,
		SecretSealed: m.SecretSealed, VerifiedAt: m.VerifiedAt, CreatedAt: m.CreatedAt,
	}
	if m.PhoneNumber != nil {
		f.Phone = *m.PhoneNumber
	}
	return f
}

type mfaRecoveryCode struct {
	ID        string `gorm:"primaryKey"`
	UserID    string
	FactorID  string
	CodeHash  string
	UsedAt    *time.Time
	CreatedAt time.Time
}

func (mfaRecoveryCode) TableName() string { return "mfa_recovery_codes" }

// CreateFactor inserts an unverified factor and its recovery-code hashes in one transaction.
func (s *Auth) CreateFactor(ctx context.Context, f *auth.Factor, recoveryHashes []string) error {
	m := mfaFactor{ID: f.ID, UserID: f.UserID, TenantID: f.TenantID, FactorType: f.Type, Label: f.Label,
		SecretSealed: f.SecretSealed, CreatedAt: f.CreatedAt}
	if f.Phone != "" {
		m.PhoneNumber = &f.Phone
	}
	codes := make([]mfaRecoveryCode, len(recoveryHashes))
	for i, h := range recoveryHashes {
		codes[i] = mfaRecoveryCode{ID: uuid.Must(uuid.NewV7()).String(), UserID: f.UserID, FactorID: f.ID, CodeHash: h, CreatedAt: f.CreatedAt}
	}
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := tx.Create(&m).Error; err != nil {
			return pgdb.Translate(err, "factor")
		}
		if len(codes) == 0 {
			return nil
		}
		return pgdb.Translate(tx.Create(&codes).Error, "recovery code")
	})
}

// Factor finds a factor of the user; apperr NotFound when there is none.
func (s *Auth) Factor(ctx context.Context, userID, id string) (*auth.Factor, error) {
	var m mfaFactor
	if err := s.db.WithContext(ctx).Where("user_id = ? AND id = ?", userID, id).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "factor")
	}
	f := m.toDomain()
	return &f, nil
}

// VerifiedFactors lists the user's verified factors, oldest first.
func (s *Auth) VerifiedFactors(ctx context.Context, userID string) ([]auth.Factor, error) {
	var ms []mfaFactor
	if err := s.db.WithContext(ctx).Where("user_id = ? AND verified_at IS NOT NULL", userID).Order("created_at").Find(&ms).Error; err != nil {
		return nil, pgdb.Translate(err, "factor")
	}
	out := make([]auth.Factor, len(ms))
	for i, m := range ms {
		out[i] = m.toDomain()
	}
	return out, nil
}

// MarkFactorVerified stamps the factor verified (the first time only).
func (s *Auth) MarkFactorVerified(ctx context.Context, id string, at time.Time) error {
	return pgdb.Translate(s.db.WithContext(ctx).Model(&mfaFactor{}).Where("id = ? AND verified_at IS NULL", id).
		Update("verified_at", at).Error, "factor")
}

// UseStep records a TOTP time step in one conditional update, so a step (or an earlier one) is
// accepted once even under concurrent logins.
func (s *Auth) UseStep(ctx context.Context, factorID string, step int64) (bool, error) {
	res := s.db.WithContext(ctx).Model(&mfaFactor{}).Where("id = ? AND last_used_step < ?", factorID, step).
		Update("last_used_step", step)
	if res.Error != nil {
		return false, pgdb.Translate(res.Error, "factor")
	}
	return res.RowsAffected == 1, nil
}

// UseRecoveryCode marks an unused recovery code of a verified factor of the user used, in one
// conditional update.
func (s *Auth) UseRecoveryCode(ctx context.Context, userID, codeHash string, at time.Time) (bool, error) {
	res := s.db.WithContext(ctx).Exec(`UPDATE mfa_recovery_codes c SET used_at = ?
		FROM mfa_factors f
		WHERE c.user_id = ? AND c.code_hash = ? AND c.used_at IS NULL AND f.id = c.factor_id AND f.verified_at IS NOT NULL`,
		at, userID, codeHash)
	if res.Error != nil {
		return false, pgdb.Translate(res.Error, "recovery code")
	}
	return res.RowsAffected == 1, nil
}
