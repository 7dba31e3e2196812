package auth

import (
	"context"
	"slices"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
)

// Logout revokes the session of the calling access token; logging out twice is not an error.
func (s *Service) Logout(ctx context.Context, sessionID string) error {
	if sessionID == "" {
		return nil
	}
	return s.Sessions.Revoke(ctx, sessionID)
}

// ListSessions lists the user's active sessions, newest first.
func (s *Service) ListSessions(ctx context.Context, userID string) ([]Session, error) {
	list, err := s.Sessions.List(ctx, userID)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(list, func(a, b Session) int { return b.IssuedAt.Compare(a.IssuedAt) })
	return list, nil
}

// RevokeSession revokes one of the user's sessions. It returns apperr NotFound for a session
// that does not exist or belongs to someone else.
func (s *Service) RevokeSession(ctx context.Context, userID, sessionID string) error {
	sess, err := s.Sessions.Get(ctx, sessionID)
	if err != nil {
		return err
	}
	if sess.UserID != userID {
		return apperr.E(apperr.NotFound, "session_not_found", "The session does not exist.")
	}
	return s.Sessions.Revoke(ctx, sessionID)
}

// PasswordChange is the input of ChangePassword.
type PasswordChange struct {
	TenantID, UserID, SessionID string
	Current, New                string
}

// ChangePassword replaces the user's password after checking the current one and revokes every
// other session of the user. It returns apperr Invalid for a wrong current password or a bad new
// one, NotFound when the user is gone and RateLimited after too many attempts.
func (s *Service) ChangePassword(ctx context.Context, in PasswordChange) error {
	var c check.Checker
	account.CheckPassword(&c, "new_password", in.New)
	if err := c.Reject("validation_failed", "The new password is invalid."); err != nil {
		return err
	}
	if err := s.Limiter.Check(ctx, "password-change:"+in.UserID, s.Limits.LoginPerAccount); err != nil {
		return err
	}
	u, err := s.Users.User(ctx, in.TenantID, in.UserID)
	if err != nil {
		return err
	}
	match, _, err := s.Hasher.Verify(in.Current, u.PasswordHash)
	if err != nil {
		return err
	}
	if !match {
		return check.Field("wrong_password", "The current password is not correct.", "current_password", "is not correct")
	}
	hash, err := s.Hasher.Hash(in.New)
	if err != nil {
		return err
	}
	if err := s.setPasswordHash(ctx, u.ID, hash); err != nil {
		return err
	}
	return s.Sessions.RevokeOthers(ctx, u.ID, in.SessionID)
}

// recordLogin stamps the user's last activity and, when newHash is set, stores the re-hashed
// password; it answers the user as saved.
func (s *Service) recordLogin(ctx context.Context, userID, newHash string) (*User, error) {
	if newHash == "" {
		return s.Users.Touch(ctx, userID, s.Now())
	}
	return s.Users.Update(ctx, userID, func(u *User) error {
		u.LastActive = s.Now()
		if newHash != "" {
			u.PasswordHash = newHash
		}
		return nil
	})
}

// setPasswordHash replaces the user's password hash.
func (s *Service) setPasswordHash(ctx context.Context, userID, hash string) error {
	_, err := s.Users.Update(ctx, userID, func(u *User) error {
		u.PasswordHash = hash
		return nil
	})
	return err
}
