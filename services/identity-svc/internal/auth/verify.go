package auth

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"math/big"
	"net/url"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
	"github.com/motionstudio/platform/services/identity-svc/internal/notify"
)

// sixDigits is a uniformly random 6-digit code.
func sixDigits() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return fmt.Sprintf("%06d", n.Int64())
}

// codeHash binds a code to its token, so a stored hash reveals neither.
func codeHash(token, code string) string { return HashToken(token + ":" + code) }

// sendChallenge stores a one-time challenge for the user and sends its token (and code) to
// target over channel.
func (s *Service) sendChallenge(ctx context.Context, purpose, channel string, u *User, target string, ttl time.Duration, withCode bool) error {
	tok, code := randomToken(), ""
	if withCode {
		code = sixDigits()
	}
	c := Challenge{Purpose: purpose, TokenHash: HashToken(tok), CodeHash: codeHash(tok, code), UserID: u.ID, TenantID: u.TenantID, Target: target}
	if err := s.Challenges.Put(ctx, c, ttl); err != nil {
		return err
	}
	return s.Notifier.Send(ctx, s.compose(purpose, channel, u, target, tok, code, ttl))
}

func (s *Service) compose(purpose, channel string, u *User, target, tok, code string, ttl time.Duration) notify.Message {
	q := url.Values{"token": {tok}}
	if code != "" {
		q.Set("code", code)
	}
	m := notify.Message{Channel: channel, To: target, Kind: purpose, TenantID: u.TenantID, UserID: u.ID,
		Data: map[string]string{"token": tok, "code": code}}
	valid := ttl.Round(time.Minute).String()
	switch purpose {
	case PurposeReset:
		m.Subject = "Reset your password"
		m.Body = fmt.Sprintf("Someone asked to reset the password of your account. If it was you, open:\n%s/reset-password?%s\n"+
			"The link is valid for %s. If it was not you, ignore this message.", s.Messages.LinkBase, q.Encode(), valid)
	case PurposeVerifyPhone:
		m.Body = fmt.Sprintf("Your verification code is %s (valid for %s). Link: %s/verify/phone?%s", code, valid, s.Messages.LinkBase, q.Encode())
	default:
		m.Subject = "Verify your email address"
		m.Body = fmt.Sprintf("Your verification code is %s.\nOr open %s/verify/email?%s\nThe code is valid for %s.",
			code, s.Messages.LinkBase, q.Encode(), valid)
	}
	return m
}

// sendVerifications sends the email and phone verification messages of a new account. A failed
// delivery is logged, not returned: the account is already committed.
func (s *Service) sendVerifications(ctx context.Context, u *User) {
	if u.Email != nil && !u.EmailVerified {
		if err := s.sendChallenge(ctx, PurposeVerifyEmail, notify.Email, u, *u.Email, s.Messages.EmailCodeTTL, true); err != nil {
			s.Log.ErrorContext(ctx, "auth: send email verification", slog.String("user_id", u.ID), slog.Any("error", err))
		}
	}
	if u.Phone != nil && !u.PhoneVerified {
		if err := s.sendChallenge(ctx, PurposeVerifyPhone, notify.SMS, u, *u.Phone, s.Messages.PhoneCodeTTL, true); err != nil {
			s.Log.ErrorContext(ctx, "auth: send phone verification", slog.String("user_id", u.ID), slog.Any("error", err))
		}
	}
}

func errTokenInvalid() error {
	return check.Field("token_invalid", "The token is unknown, expired or already used.", "token", "is unknown, expired or already used")
}

// Verified is the outcome of a verification.
type Verified struct {
	UserID                       string
	EmailVerified, PhoneVerified bool
}

// Verify confirms the email (channel notify.Email) or phone (notify.SMS) a challenge was sent
// to. Codes are single use, expire and are burnt after Messages.MaxAttempts wrong tries. It
// returns apperr Invalid for a missing, unknown, expired or used token, a wrong code (wrong_code)
// or an address that changed since, and RateLimited when the address tries too often.
func (s *Service) Verify(ctx context.Context, channel, tok, code, ip string) (*Verified, error) {
	if tok == "" || code == "" || len(tok) > 128 || len(code) > 16 {
		return nil, check.Field("validation_failed", "The token and the code are required.", "code", "token and code are required")
	}
	if err := s.Limiter.Check(ctx, "verify:ip:"+ip, s.Limits.VerifyPerIP); err != nil {
		return nil, err
	}
	purpose := PurposeVerifyEmail
	if channel == notify.SMS {
		purpose = PurposeVerifyPhone
	}
	c, err := s.Challenges.Consume(ctx, purpose, HashToken(tok), codeHash(tok, strings.TrimSpace(code)), s.Messages.MaxAttempts)
	if apperr.Is(err, apperr.NotFound) {
		return nil, errTokenInvalid()
	}
	if err != nil {
		return nil, err
	}
	u, err := s.Users.Update(ctx, c.UserID, func(u *User) error {
		return u.ConfirmAddress(channel == notify.SMS, c.Target)
	})
	if apperr.Is(err, apperr.NotFound) {
		return nil, errTokenInvalid()
	}
	if err != nil {
		return nil, err
	}
	return &Verified{UserID: u.ID, EmailVerified: u.EmailVerified, PhoneVerified: u.PhoneVerified}, nil
}

// ResetRequest is the input of RequestReset.
type ResetRequest struct {
	TenantSlug, Email, Phone, IPAddress string
}

// RequestReset accepts a password-reset request: it queues it in Resets, and RunResets later
// sends a link to the account's email (or phone) when the account exists and is not banned, and
// does nothing otherwise. The account is neither looked up nor messaged here, so the answer
// takes the same time whether or not it exists and the caller cannot tell which. It returns
// apperr Invalid when the tenant or both email and phone are missing or the email is not an
// address, and RateLimited when the address, the account or the tenant asks too often.
func (s *Service) RequestReset(ctx context.Context, in ResetRequest) error {
	if strings.TrimSpace(in.TenantSlug) == "" || (strings.TrimSpace(in.Email) == "" && strings.TrimSpace(in.Phone) == "") {
		return check.Field("validation_failed", "The tenant and an email or a phone number are required.", "email", "tenant_slug and an email or a phone number are required")
	}
	slug := strings.ToLower(strings.TrimSpace(in.TenantSlug))
	email, err := givenEmail(in.Email)
	if err != nil {
		return err
	}
	phone, _ := normalizePhone(in.Phone)
	account := email
	if account == "" {
		account = phone
	}
	if err := s.Limiter.Check(ctx, "reset:ip:"+in.IPAddress, s.Limits.ResetPerIP); err != nil {
		return err
	}
	if err := s.Limiter.Check(ctx, "reset:tenant:"+slug, s.Limits.ResetPerTenant); err != nil {
		return err
	}
	if err := s.Limiter.Check(ctx, "reset:account:"+slug+":"+account, s.Limits.ResetPerAccount); err != nil {
		return err
	}
	job := ResetJob{ID: s.NewID(), TenantSlug: slug, Email: email, Phone: phone, CreatedAt: s.Now()}
	if err := s.Resets.Add(ctx, job); err != nil {
		return fmt.Errorf("auth: queue password reset: %w", err)
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// ConfirmReset sets a new password with a reset token and revokes every session of the user.
// It returns apperr Invalid for a bad password or an unknown, expired or used token, and
// RateLimited when the address tries too often.
func (s *Service) ConfirmReset(ctx context.Context, tok, newPassword, ip string) error {
	var problems check.Checker
	account.CheckPassword(&problems, "new_password", newPassword)
	if err := problems.Reject("validation_failed", "The new password is invalid."); err != nil {
		return err
	}
	if tok == "" || len(tok) > 128 {
		return errTokenInvalid()
	}
	if err := s.Limiter.Check(ctx, "verify:ip:"+ip, s.Limits.VerifyPerIP); err != nil {
		return err
	}
	c, err := s.Challenges.Consume(ctx, PurposeReset, HashToken(tok), codeHash(tok, ""), s.Messages.MaxAttempts)
	if apperr.Is(err, apperr.NotFound) {
		return errTokenInvalid()
	}
	if err != nil {
		return err
	}
	hash, err := s.Hasher.Hash(newPassword)
	if err != nil {
		return err
	}
	if err := s.setPasswordHash(ctx, c.UserID, hash); err != nil {
		return err
	}
	return s.Sessions.RevokeOthers(ctx, c.UserID, "")
}
