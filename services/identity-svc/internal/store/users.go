package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
)

// Users is the repository of the users table (account.Store, account.UserStore and the user
// side of auth): userModel is the table's only gorm model.
type Users struct {
	db      *gorm.DB
	outbox  *outbox.Writer
	changes AccountChanges

	joinOnce  sync.Once
	joinQuery *userTenantJoin
	joinErr   error
}

// NewUsers returns a Users store writing its events through w and telling changes (nil: no one)
// of the users it updates.
func NewUsers(db *gorm.DB, w *outbox.Writer, changes AccountChanges) *Users {
	return &Users{db: db, outbox: w, changes: heard(changes)}
}

// userModel is the users table's gorm model.
type userModel struct {
	ID                       string `gorm:"primaryKey"`
	TenantID                 string
	Email                    *string
	EmailVerified            bool
	PhoneNumber              *string
	PhoneVerified            bool
	FullName                 *string
	AvatarURL                *string
	IsAdmin                  bool
	IsTenantAdmin            bool
	RegisterMode             string
	PasswordHash             string
	LastActiveDate           time.Time
	RegisterDate             time.Time
	BalanceMinor             int64
	AffiliateBalanceMinor    int64
	LoyaltyScore             int
	DailyRemainRenderCount   int
	MaxDailyRenderCount      int
	ParallelRenderingCeiling int
	UsedStorageBytes         int64
	Slogan                   *string
	AboutMe                  *string
	CompanyName              *string
	WebsiteName              *string
	BirthDate                *time.Time `gorm:"type:date"`
	Gender                   *string
	EmailTellMe              bool
	SmsTellMe                bool
	PushTellMe               bool
	TelegramTellMe           bool
	AvatarID                 *string
	BannedAt                 *time.Time
	BannedUntil              *time.Time
	BanReason                *string
	SignupAffiliateCode      *string
}

// TableName is the table of every user.
func (userModel) TableName() string { return "users" }

func toUserModel(u *account.User) userModel {
	return userModel{
		ID: u.ID, TenantID: u.TenantID, Email: u.Email, EmailVerified: u.EmailVerified, PhoneNumber: u.Phone,
		PhoneVerified: u.PhoneVerified, FullName: u.FullName, AvatarURL: u.AvatarURL, IsAdmin: u.IsAdmin,
		IsTenantAdmin: u.IsTenantAdmin, RegisterMode: u.RegisterMode, PasswordHash: u.PasswordHash,
		LastActiveDate: u.LastActive, RegisterDate: u.RegisteredAt, BalanceMinor: u.BalanceMinor,
		AffiliateBalanceMinor: u.AffiliateBalanceMinor, LoyaltyScore: u.LoyaltyScore,
		DailyRemainRenderCount: u.DailyRemainRenderCount, MaxDailyRenderCount: u.MaxDailyRenderCount,
		ParallelRenderingCeiling: u.ParallelRenderingCeiling, UsedStorageBytes: u.UsedStorageBytes,
		Slogan: u.Profile.Slogan, AboutMe: u.Profile.AboutMe, CompanyName: u.Profile.CompanyName,
		WebsiteName: u.Profile.WebsiteName, BirthDate: u.Profile.BirthDate, Gender: u.Profile.Gender,
		EmailTellMe: u.Profile.EmailTellMe, SmsTellMe: u.Profile.SMSTellMe, PushTellMe: u.Profile.PushTellMe,
		TelegramTellMe: u.Profile.TelegramTellMe, AvatarID: u.Profile.AvatarID,
		BannedAt: u.BannedAt, BannedUntil: u.BannedUntil, BanReason: u.BanReason,
		SignupAffiliateCode: u.SignupAffiliateCode,
	}
}

func (m userModel) toDomain() *account.User {
	return &account.User{
		ID: m.ID, TenantID: m.TenantID, Email: m.Email, EmailVerified: m.EmailVerified, Phone: m.PhoneNumber,
		PhoneVerified: m.PhoneVerified, FullName: m.FullName, AvatarURL: m.AvatarURL, IsAdmin: m.IsAdmin,
		IsTenantAdmin: m.IsTenantAdmin, RegisterMode: m.RegisterMode, PasswordHash: m.PasswordHash,
		LastActive: m.LastActiveDate, RegisteredAt: m.RegisterDate, BalanceMinor: m.BalanceMinor,
		AffiliateBalanceMinor: m.AffiliateBalanceMinor, LoyaltyScore: m.LoyaltyScore,
		DailyRemainRenderCount: m.DailyRemainRenderCount, MaxDailyRenderCount: m.MaxDailyRenderCount,
		ParallelRenderingCeiling: m.ParallelRenderingCeiling, UsedStorageBytes: m.UsedStorageBytes,
		Profile: account.Profile{
			Slogan: m.Slogan, AboutMe: m.AboutMe, CompanyName: m.CompanyName, WebsiteName: m.WebsiteName,
			BirthDate: m.BirthDate, Gender: m.Gender, EmailTellMe: m.EmailTellMe, SMSTellMe: m.SmsTellMe,
			PushTellMe: m.PushTellMe, TelegramTellMe: m.TelegramTellMe, AvatarID: m.AvatarID,
		},
		BannedAt: m.BannedAt, BannedUntil: m.BannedUntil, BanReason: m.BanReason,
		SignupAffiliateCode: m.SignupAffiliateCode,
	}
}

func (s *Users) where(ctx context.Context, query string, args ...any) (*account.User, error) {
	var m userModel
	if err := s.db.WithContext(ctx).Where(query, args...).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "user")
	}
	return m.toDomain(), nil
}

// User finds a user of a tenant; apperr NotFound when there is none.
func (s *Users) User(ctx context.Context, tenantID, userID string) (*account.User, error) {
	return s.where(ctx, "tenant_id = ? AND id = ?", tenantID, userID)
}

// UserWithTenant finds a user of a tenant together with its tenant in one query (the refresh
// path reads both on every call); apperr NotFound when there is no such user.
func (s *Users) UserWithTenant(ctx context.Context, tenantID, userID string) (*account.User, *tenant.Tenant, error) {
	return s.withTenant(ctx, "u.tenant_id = $1 AND u.id = $2", tenantID, userID)
}

// UserByEmailWithTenant finds the user with that (lower-case) email in the tenant with that
// slug, together with the tenant, in one query; apperr NotFound when there is none.
func (s *Users) UserByEmailWithTenant(ctx context.Context, slug, email string) (*account.User, *tenant.Tenant, error) {
	return s.withTenant(ctx, "t.slug = $1 AND u.email = $2", slug, email)
}

// UserByPhoneWithTenant finds the user with that E.164 phone number in the tenant with that
// slug, together with the tenant, in one query; apperr NotFound when there is none.
func (s *Users) UserByPhoneWithTenant(ctx context.Context, slug, phone string) (*account.User, *tenant.Tenant, error) {
	return s.withTenant(ctx, "t.slug = $1 AND u.phone_number = $2", slug, phone)
}

// withTenant reads the one user (u) matching where ($1, $2: args) with its tenant (t). The row
// is scanned straight into the models' fields: gorm's scanning cost a third of the refresh
// path's time in this one query.
func (s *Users) withTenant(ctx context.Context, where string, args ...any) (*account.User, *tenant.Tenant, error) {
	j, err := s.join()
	if err != nil {
		return nil, nil, err
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, nil, fmt.Errorf("store: user with tenant: %w", err)
	}
	var m userTenantModel
	v := reflect.ValueOf(&m).Elem()
	dest := make([]any, len(j.fields))
	for i, f := range j.fields {
		dest[i] = v.FieldByIndex(f).Addr().Interface()
	}
	if err := sqlDB.QueryRowContext(ctx, j.selectFrom+" WHERE "+where+" LIMIT 1", args...).Scan(dest...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			err = gorm.ErrRecordNotFound
		}
		return nil, nil, pgdb.Translate(err, "user")
	}
	return m.User.toDomain(), m.Tenant.toDomain(), nil
}

// userTenantModel is a users row with its tenants row, whose columns carry the prefix t_.
type userTenantModel struct {
	User   userModel `gorm:"embedded"`
	Tenant tenantRow `gorm:"embedded;embeddedPrefix:t_"`
}

// userTenantJoin is the select of every column of userTenantModel (the users table as u, the
// tenants table as t) and the index of each column's field, taken from the models' schema so
// that a column added to either model is read here too.
type userTenantJoin struct {
	selectFrom string
	fields     [][]int
}

func (s *Users) join() (*userTenantJoin, error) {
	s.joinOnce.Do(func() {
		stmt := &gorm.Statement{DB: s.db}
		if err := stmt.Parse(&userTenantModel{}); err != nil {
			s.joinErr = fmt.Errorf("store: parse user and tenant models: %w", err)
			return
		}
		j := &userTenantJoin{}
		cols := make([]string, 0, len(stmt.Schema.Fields))
		for _, f := range stmt.Schema.Fields {
			if f.DBName == "" {
				continue
			}
			if f.BindNames[0] == "Tenant" {
				cols = append(cols, "t."+strings.TrimPrefix(f.DBName, "t_"))
			} else {
				cols = append(cols, "u."+f.DBName)
			}
			j.fields = append(j.fields, f.StructField.Index)
		}
		j.selectFrom = "SELECT " + strings.Join(cols, ", ") + " FROM users u JOIN tenants t ON t.id = u.tenant_id"
		s.joinQuery = j
	})
	return s.joinQuery, s.joinErr
}

// UserAnyTenant finds a user by id; apperr NotFound when there is none.
func (s *Users) UserAnyTenant(ctx context.Context, userID string) (*account.User, error) {
	return s.where(ctx, "id = ?", userID)
}

// UserByEmail finds a user of a tenant by (lower-case) email; apperr NotFound when there is none.
func (s *Users) UserByEmail(ctx context.Context, tenantID, email string) (*account.User, error) {
	return s.where(ctx, "tenant_id = ? AND email = ?", tenantID, email)
}

// UserByPhone finds a user of a tenant by E.164 phone number; apperr NotFound when there is none.
func (s *Users) UserByPhone(ctx context.Context, tenantID, phone string) (*account.User, error) {
	return s.where(ctx, "tenant_id = ? AND phone_number = ?", tenantID, phone)
}

// UserByOAuth finds the user linked to a provider account; apperr NotFound when none is.
func (s *Users) UserByOAuth(ctx context.Context, tenantID, provider, subject string) (*account.User, error) {
	return s.where(ctx, "tenant_id = ? AND id = (SELECT user_id FROM oauth_identities WHERE tenant_id = ? AND provider = ? AND subject = ?)",
		tenantID, tenantID, provider, subject)
}

// Create inserts u and its identity.user.registered.v1 event in one transaction; apperr
// Conflict when the email or phone is taken in the tenant.
func (s *Users) Create(ctx context.Context, u *account.User) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error { return s.insert(ctx, tx, u) })
}

// insert writes u and its identity.user.registered.v1 event in tx: every way a user comes to
// exist (registration, OAuth, the operator CLI) goes through it.
func (s *Users) insert(ctx context.Context, tx *gorm.DB, u *account.User) error {
	m := toUserModel(u)
	if err := tx.WithContext(ctx).Create(&m).Error; err != nil {
		return pgdb.Translate(err, "user")
	}
	ev := &identityv1.UserRegistered{
		UserId: u.ID, TenantId: u.TenantID, Email: deref(u.Email), PhoneNumber: deref(u.Phone),
		FullName: deref(u.FullName), RegisterMode: u.RegisterMode, RegisteredAt: timestamppb.New(u.RegisteredAt),
	}
	_, err := s.outbox.Add(ctx, tx, events.SubjectUserRegistered, events.SubjectUserRegistered, ev)
	return err
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Update locks the user, applies fn and saves every field in one transaction. It returns
// apperr NotFound for an unknown user and fn's error unchanged.
func (s *Users) Update(ctx context.Context, userID string, fn func(*account.User) error) (*account.User, error) {
	var out *account.User
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var err error
		out, err = updateUser(tx, userID, fn)
		return err
	})
	s.changes.UserChanged(userID)
	return out, err
}

// Touch sets the user's last_active_date to at in one statement (a login's only write when
// its password hash stays) and answers the user as the database now holds it; apperr NotFound
// for an unknown user.
func (s *Users) Touch(ctx context.Context, userID string, at time.Time) (*account.User, error) {
	var m userModel
	res := s.db.WithContext(ctx).Raw("UPDATE users SET last_active_date = ?, updated_at = now() WHERE id = ? RETURNING *", at, userID).Scan(&m)
	s.changes.UserChanged(userID)
	if res.Error != nil {
		return nil, pgdb.Translate(res.Error, "user")
	}
	if res.RowsAffected == 0 {
		return nil, pgdb.Translate(gorm.ErrRecordNotFound, "user")
	}
	return m.toDomain(), nil
}

// changeBalance applies the user's one balance operation inside the caller's transaction tx
// (account.User.ChangeBalance: Conflict insufficient_balance when it would go negative).
func changeBalance(tx *gorm.DB, userID string, delta int64) error {
	_, err := updateUser(tx, userID, func(u *account.User) error { return u.ChangeBalance(delta) })
	return err
}

// updateUser is Update inside the caller's transaction tx.
func updateUser(tx *gorm.DB, userID string, fn func(*account.User) error) (*account.User, error) {
	var m userModel
	if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", userID).Take(&m).Error; err != nil {
		return nil, pgdb.Translate(err, "user")
	}
	u := m.toDomain()
	if err := fn(u); err != nil {
		return nil, err
	}
	saved := toUserModel(u)
	if err := tx.Model(&saved).Select("*").Omit("id", "tenant_id").Updates(&saved).Error; err != nil {
		return nil, pgdb.Translate(err, "user")
	}
	// Read back what the database holds (times at its microsecond precision), so the caller
	// answers exactly what a later read returns.
	var back userModel
	if err := tx.Raw("UPDATE users SET updated_at = now() WHERE id = ? RETURNING *", u.ID).Scan(&back).Error; err != nil {
		return nil, pgdb.Translate(err, "user")
	}
	return back.toDomain(), nil
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
	defer s.changes.UserChanged(u.ID)
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
