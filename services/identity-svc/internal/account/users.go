package account

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// Genders returns the genders a profile may state.
func Genders() []string { return []string{"Male", "Female", "Other", "PreferNotToSay"} }

// UserUpdate changes the fields that are not nil.
type UserUpdate struct {
	FullName, Slogan, AboutMe, CompanyName, WebsiteName *string
	BirthDate                                           *time.Time
	Gender                                              *string
	EmailTellMe, SMSTellMe, PushTellMe, TelegramTellMe  *bool
}

// UserQuery selects a page of users.
type UserQuery struct {
	Q        string
	TenantID string
	Page     int
	PageSize int
}

// UserPage is one page of users and the total that matched.
type UserPage struct {
	Users          []*User
	Total          int64
	Page, PageSize int
}

// Ban is a ban being applied to a user.
type Ban struct {
	Reason   string
	Until    *time.Time
	BannedBy string
	At       time.Time
}

// UserStore persists users for the Users service. Lookups return apperr NotFound.
type UserStore interface {
	User(ctx context.Context, tenantID, userID string) (*User, error)
	// UserAnyTenant finds a user by id alone.
	UserAnyTenant(ctx context.Context, userID string) (*User, error)
	// Update locks the user, applies fn and saves it in one transaction (apperr NotFound for an
	// unknown user, fn's error unchanged).
	Update(ctx context.Context, userID string, fn func(*User) error) (*User, error)
	ListUsers(ctx context.Context, q UserQuery) (UserPage, error)
	// AvatarURL returns the URL of a library avatar; apperr NotFound when there is none.
	AvatarURL(ctx context.Context, avatarID string) (string, error)
	// BanUser records the ban and its event in one transaction.
	BanUser(ctx context.Context, u *User, ban Ban) error
}

// SessionRevoker ends every live session of a user, so the user's access and refresh tokens
// stop working at once.
type SessionRevoker interface {
	RevokeAll(ctx context.Context, userID string) error
}

// Users implements the user operations: the caller's own profile and the admin directory.
type Users struct {
	store    UserStore
	sessions SessionRevoker
	now      func() time.Time
}

// NewUsers returns a Users service; sessions ends the live sessions of banned users.
func NewUsers(store UserStore, sessions SessionRevoker, now func() time.Time) *Users {
	return &Users{store: store, sessions: sessions, now: now}
}

// Me returns the calling user; apperr NotFound when the account no longer exists.
func (s *Users) Me(ctx context.Context, a actor.Actor) (*User, error) {
	return s.store.User(ctx, a.TenantID, a.UserID)
}

// UpdateMe validates and applies a profile update to the calling user. It returns apperr
// Invalid (changing nothing) for bad fields and NotFound for a vanished account.
func (s *Users) UpdateMe(ctx context.Context, a actor.Actor, in UserUpdate) (*User, error) {
	if err := s.validateUpdate(in); err != nil {
		return nil, err
	}
	return s.updateMe(ctx, a, func(u *User) error {
		set := func(dst **string, v *string) {
			if v != nil {
				t := strings.TrimSpace(*v)
				if t == "" {
					*dst = nil
					return
				}
				*dst = &t
			}
		}
		set(&u.FullName, in.FullName)
		set(&u.Profile.Slogan, in.Slogan)
		set(&u.Profile.AboutMe, in.AboutMe)
		set(&u.Profile.CompanyName, in.CompanyName)
		set(&u.Profile.WebsiteName, in.WebsiteName)
		if in.BirthDate != nil {
			u.Profile.BirthDate = in.BirthDate
		}
		if in.Gender != nil {
			u.Profile.Gender = in.Gender
		}
		setBool := func(dst *bool, v *bool) {
			if v != nil {
				*dst = *v
			}
		}
		setBool(&u.Profile.EmailTellMe, in.EmailTellMe)
		setBool(&u.Profile.SMSTellMe, in.SMSTellMe)
		setBool(&u.Profile.PushTellMe, in.PushTellMe)
		setBool(&u.Profile.TelegramTellMe, in.TelegramTellMe)
		return nil
	})
}

func (s *Users) validateUpdate(in UserUpdate) error {
	var c check.Checker
	c.Text("full_name", in.FullName, check.NameMax)
	c.Text("slogan", in.Slogan, check.NameMax)
	c.Text("about_me", in.AboutMe, 2000)
	c.Text("company_name", in.CompanyName, check.NameMax)
	c.Text("website_name", in.WebsiteName, check.NameMax)
	if in.BirthDate != nil {
		today := s.now()
		c.AddIf(in.BirthDate.After(today) || in.BirthDate.Before(today.AddDate(-150, 0, 0)), "birth_date", "must be a past date within 150 years")
	}
	c.AddIf(in.Gender != nil && !slices.Contains(Genders(), *in.Gender), "gender", "must be one of Male, Female, Other, PreferNotToSay")
	return c.Reject("validation_failed", "the profile update is invalid")
}

// SetAvatar sets the calling user's avatar from the library (avatarID) or to a custom https
// URL; exactly one must be given. It returns apperr Invalid for a bad choice and NotFound for
// an unknown library avatar.
func (s *Users) SetAvatar(ctx context.Context, a actor.Actor, avatarID, avatarURL string) (*User, error) {
	avatarURL = strings.TrimSpace(avatarURL)
	switch {
	case (avatarID == "") == (avatarURL == ""):
		return nil, check.Field("validation_failed", "give either avatar_id or avatar_url", "avatar_id", "exactly one of avatar_id and avatar_url is required")
	case avatarID != "":
		u, err := s.store.AvatarURL(ctx, avatarID)
		if err != nil {
			return nil, err
		}
		return s.updateMe(ctx, a, func(usr *User) error {
			usr.AvatarURL, usr.Profile.AvatarID = &u, &avatarID
			return nil
		})
	default:
		if err := ValidateHTTPSURL(avatarURL); err != nil {
			return nil, check.Field("validation_failed", "the avatar URL is invalid", "avatar_url", err.Error())
		}
		return s.updateMe(ctx, a, func(usr *User) error {
			usr.AvatarURL, usr.Profile.AvatarID = &avatarURL, nil
			return nil
		})
	}
}

// updateMe applies fn to the caller's own user, which must belong to the caller's tenant
// (apperr NotFound otherwise).
func (s *Users) updateMe(ctx context.Context, a actor.Actor, fn func(*User) error) (*User, error) {
	return s.store.Update(ctx, a.UserID, func(u *User) error {
		if u.TenantID != a.TenantID {
			return apperr.E(apperr.NotFound, "not_found", "user not found")
		}
		return fn(u)
	})
}

// urlError is a user-facing reason a URL is refused.
type urlError string

func (e urlError) Error() string { return string(e) }

// ValidateHTTPSURL accepts an absolute https URL with a host, no user info and at most 2048
// characters; its error message is fit for the user.
func ValidateHTTPSURL(raw string) error {
	if len(raw) > 2048 {
		return urlError("must be at most 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return urlError("must be an absolute https URL without credentials")
	}
	return nil
}

// User returns a user to an admin: platform admins see every tenant, tenant admins their own.
// It returns apperr Forbidden for a non-admin and NotFound for a user the admin may not see.
func (s *Users) User(ctx context.Context, a actor.Actor, userID string) (*User, error) {
	if !a.IsAdmin() {
		return nil, apperr.E(apperr.Forbidden, "admin_required", "an administrator is required")
	}
	if a.PlatformAdmin {
		return s.store.UserAnyTenant(ctx, userID)
	}
	return s.store.User(ctx, a.TenantID, userID)
}

// List returns a page of users, newest first. It returns apperr Forbidden for a non-admin or
// a tenant admin naming another tenant, and Invalid for a bad page.
func (s *Users) List(ctx context.Context, a actor.Actor, q UserQuery) (UserPage, error) {
	if !a.IsAdmin() {
		return UserPage{}, apperr.E(apperr.Forbidden, "admin_required", "an administrator is required")
	}
	if !a.PlatformAdmin {
		if q.TenantID != "" && q.TenantID != a.TenantID {
			return UserPage{}, apperr.E(apperr.Forbidden, "other_tenant", "a tenant administrator can only list their own tenant's users")
		}
		q.TenantID = a.TenantID
	}
	p, err := paging.Ints(q.Page, q.PageSize)
	if err != nil {
		return UserPage{}, err
	}
	q.Page, q.PageSize = p.Number, p.Size
	q.Q = strings.ToLower(strings.TrimSpace(q.Q))
	if utf8.RuneCountInString(q.Q) > 200 {
		return UserPage{}, check.Field("validation_failed", "the search is too long", "q", "must be at most 200 characters")
	}
	out, err := s.store.ListUsers(ctx, q)
	if err != nil {
		return UserPage{}, err
	}
	out.Page, out.PageSize = q.Page, q.PageSize
	return out, nil
}

// BanUser bans a user until a future date or without end, records who did it and why, and
// ends the user's live sessions. Platform admins ban anyone but themselves; tenant admins ban users of their own tenant who
// are not platform admins. It returns apperr Invalid for a missing reason, a past date or a
// self-ban, Forbidden for a non-admin or a tenant admin banning a platform admin, and NotFound
// for a user the admin may not see, and Unavailable when the sessions cannot be ended (the ban
// is recorded; banning again ends them).
func (s *Users) BanUser(ctx context.Context, a actor.Actor, userID, reason string, until *time.Time) error {
	reason = strings.TrimSpace(reason)
	now := s.now()
	var c check.Checker
	c.AddIf(reason == "" || utf8.RuneCountInString(reason) > 500, "reason", "is required and at most 500 characters")
	c.AddIf(until != nil && !until.After(now), "unblock_date", "must be in the future")
	if err := c.Reject("validation_failed", "the ban is invalid"); err != nil {
		return err
	}
	u, err := s.User(ctx, a, userID)
	if err != nil {
		return err
	}
	if u.ID == a.UserID {
		return apperr.E(apperr.Invalid, "cannot_ban_self", "administrators cannot ban themselves")
	}
	if u.IsAdmin && !a.PlatformAdmin {
		return apperr.E(apperr.Forbidden, "cannot_ban_platform_admin", "only a platform administrator can ban a platform administrator")
	}
	if err := s.store.BanUser(ctx, u, Ban{Reason: reason, Until: until, BannedBy: a.UserID, At: now}); err != nil {
		return err
	}
	return s.sessions.RevokeAll(ctx, u.ID)
}
