package store

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
)

// Users implements account.UserStore.
type Users struct {
	db     *gorm.DB
	outbox *outbox.Writer
}

// NewUsers returns a Users store writing its events through w.
func NewUsers(db *gorm.DB, w *outbox.Writer) *Users { return &Users{db: db, outbox: w} }

// User finds a user of a tenant; apperr NotFound when there is none.
func (s *Users) User(ctx context.Context, tenantID, userID string) (*account.User, error) {
	return NewAccounts(s.db).User(ctx, tenantID, userID)
}

// UserAnyTenant finds a user by id; apperr NotFound when there is none.
func (s *Users) UserAnyTenant(ctx context.Context, userID string) (*account.User, error) {
	var m userModel
	if err := s.db.WithContext(ctx).Where("id = ?", userID).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "user")
	}
	return m.toDomain(), nil
}

// UpdateUser locks the user, applies fn and saves every field in one transaction. It returns
// apperr NotFound for an unknown user and fn's error unchanged.
func (s *Users) UpdateUser(ctx context.Context, tenantID, userID string, fn func(*account.User) error) (*account.User, error) {
	var out *account.User
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var m userModel
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).
			Where("tenant_id = ? AND id = ?", tenantID, userID).Take(&m).Error
		if err != nil {
			return pgdb.Translate(err, "user")
		}
		u := m.toDomain()
		if err := fn(u); err != nil {
			return err
		}
		saved := toUserModel(u)
		if err := tx.Model(&saved).Select("*").Omit("id", "tenant_id").Updates(&saved).Error; err != nil {
			return pgdb.Translate(err, "user")
		}
		if err := tx.Exec("UPDATE users SET updated_at = now() WHERE id = ?", u.ID).Error; err != nil {
			return pgdb.Translate(err, "user")
		}
		out = u
		return nil
	})
	return out, err
}

// searchExpr is the text the trigram index users_search_trgm_idx covers.
const searchExpr = "lower(coalesce(email, '') || ' ' || coalesce(phone_number, '') || ' ' || coalesce(full_name, ''))"

// ListUsers answers a page of users newest first with the total that matched.
func (s *Users) ListUsers(ctx context.Context, q account.UserQuery) (account.UserPage, error) {
	query := s.db.WithContext(ctx).Model(&userModel{})
	if q.TenantID != "" {
		query = query.Where("tenant_id = ?", q.TenantID)
	}
	if q.Q != "" {
		query = query.Where(searchExpr+" LIKE ?", "%"+escapeLike(q.Q)+"%")
	}
	var total int64
	if err := query.Count(&total).Error; err != nil {
		return account.UserPage{}, pgdb.Translate(err, "users")
	}
	var models []userModel
	err := query.Order("register_date DESC, id DESC").Limit(q.PageSize).Offset((q.Page - 1) * q.PageSize).Find(&models).Error
	if err != nil {
		return account.UserPage{}, pgdb.Translate(err, "users")
	}
	page := account.UserPage{Total: total, Users: make([]*account.User, len(models))}
	for i, m := range models {
		page.Users[i] = m.toDomain()
	}
	return page, nil
}

// AvatarURL returns a library avatar's URL; apperr NotFound when there is none.
func (s *Users) AvatarURL(ctx context.Context, avatarID string) (string, error) {
	var url string
	res := s.db.WithContext(ctx).Raw("SELECT url FROM avatar_library WHERE id = ?", avatarID).Scan(&url)
	if res.Error != nil {
		return "", pgdb.Translate(res.Error, "avatar")
	}
	if res.RowsAffected == 0 {
		return "", pgdb.Translate(gorm.ErrRecordNotFound, "avatar")
	}
	return url, nil
}

// BanUser records the ban on the user and writes identity.user.banned.v1 in one transaction;
// apperr NotFound when the user vanished.
func (s *Users) BanUser(ctx context.Context, u *account.User, ban account.Ban) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		res := tx.Exec(`UPDATE users SET banned_at = ?, banned_until = ?, ban_reason = ?, updated_at = now()
			WHERE id = ? AND tenant_id = ?`, ban.At, ban.Until, ban.Reason, u.ID, u.TenantID)
		if res.Error != nil {
			return pgdb.Translate(res.Error, "user")
		}
		if res.RowsAffected == 0 {
			return pgdb.Translate(gorm.ErrRecordNotFound, "user")
		}
		msg := &identityv1.UserBanned{
			UserId: u.ID, TenantId: u.TenantID, Reason: ban.Reason, BannedBy: ban.BannedBy,
			BannedAt: timestamppb.New(ban.At), UnblockAt: optionalTimestamp(ban.Until),
		}
		_, err := s.outbox.Add(ctx, tx, events.SubjectUserBanned, events.SubjectUserBanned, msg)
		return err
	})
}

func optionalTimestamp(t *time.Time) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return timestamppb.New(*t)
}

// escapeLike escapes the LIKE wildcards of s with the default escape character.
func escapeLike(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '%' || r == '_' || r == '\\' {
			out = append(out, '\\')
		}
		out = append(out, r)
	}
	return string(out)
}
