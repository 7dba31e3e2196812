package auth

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/identity-svc/internal/mfa"
	"github.com/motionstudio/platform/services/identity-svc/internal/notify"
)

// Factor types.
const (
	FactorTOTP = "TOTP"
	FactorSMS  = "SMS"
)

// Challenge purposes of MFA.
const (
	PurposeMFALogin    = "mfa-login"
	PurposeMFASMS      = "mfa-sms"
	PurposeMFASMSSetup = "mfa-sms-setup"
)

// recoveryCodeCount is how many recovery codes a setup answers.
const recoveryCodeCount = 10

// Factor is a user's second factor.
type Factor struct {
	ID           string
	UserID       string
	TenantID     string
	Type         string
	Label        string
	SecretSealed []byte
	Phone        string
	VerifiedAt   *time.Time
	CreatedAt    time.Time
}

// Factors stores second factors and recovery codes. Factor returns apperr NotFound for a factor
// that does not exist or is not the user's. UseStep records a TOTP step and reports false when
// that step or a later one was already used. UseRecoveryCode marks an unused code of a verified
// factor used and reports false when there is none.
type Factors interface {
	CreateFactor(ctx context.Context, f *Factor, recoveryHashes []string) error
	Factor(ctx context.Context, userID, id string) (*Factor, error)
	VerifiedFactors(ctx context.Context, userID string) ([]Factor, error)
	MarkFactorVerified(ctx context.Context, id string, at time.Time) error
	UseStep(ctx context.Context, factorID string, step int64) (bool, error)
	UseRecoveryCode(ctx context.Context, userID, codeHash string, at time.Time) (bool, error)
}

// Sealer encrypts secrets at rest, bound to associated data.
type Sealer interface {
	Seal(plain, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// MFAConfig configures second factors.
type MFAConfig struct {
	// Issuer names the service in authenticator apps.
	Issuer string
	// TokenTTL is how long a login's mfa_token lives.
	TokenTTL time.Duration
}

// MFASetup is what a new factor's owner sees once.
type MFASetup struct {
	Factor        *Factor
	Secret        string
	URL           string
	RecoveryCodes []string
}

// MFAPending is a login that waits for its second factor.
type MFAPending struct {
	Token     string
	ExpiresIn time.Duration
	Factors   []Factor
}

var sixDigitPattern = regexp.MustCompile(`^[0-9]{6}$`)

func recoveryHash(userID, code string) string {
	return HashToken(userID + ":" + mfa.NormalizeRecoveryCode(code))
}

// SetupMFA creates an unverified factor. A TOTP factor answers its secret and otpauth URL; an
// SMS factor uses the account's phone number and texts it a code. Both answer ten recovery
// codes, valid once the factor is verified. It returns apperr Invalid for an unknown factor type,
// a label over 100 characters or an SMS factor without phone number, and NotFound when the user
// is gone.
func (s *Service) SetupMFA(ctx context.Context, tenantID, userID, factorType, label string) (*MFASetup, error) {
	if factorType != FactorTOTP && factorType != FactorSMS {
		return nil, check.Field("validation_failed", "The factor type is invalid.", "factor_type", "must be TOTP or SMS")
	}
	label = strings.TrimSpace(label)
	if len([]rune(label)) > 100 {
		return nil, check.Field("validation_failed", "The label is too long.", "label", "must be at most 100 characters")
	}
	u, err := s.Users.User(ctx, tenantID, userID)
	if err != nil {
		return nil, err
	}
	f := &Factor{ID: s.NewID(), UserID: u.ID, TenantID: u.TenantID, Type: factorType, Label: label, CreatedAt: s.Now()}
	out := &MFASetup{Factor: f, RecoveryCodes: mfa.RecoveryCodes(recoveryCodeCount)}
	var secret []byte
	if factorType == FactorTOTP {
		secret = mfa.NewSecret()
		if f.SecretSealed, err = s.Sealer.Seal(secret, []byte(f.ID)); err != nil {
			return nil, err
		}
		account := u.ID
		if u.Email != nil {
			account = *u.Email
		} else if u.Phone != nil {
			account = *u.Phone
		}
		out.Secret, out.URL = mfa.EncodeSecret(secret), mfa.URL(s.MFA.Issuer, account, secret)
	} else {
		if u.Phone == nil {
			return nil, check.Field("phone_required", "An SMS factor needs a phone number on the account.", "factor_type", "the account has no phone number")
		}
		f.Phone = *u.Phone
	}
	hashes := make([]string, len(out.RecoveryCodes))
	for i, c := range out.RecoveryCodes {
		hashes[i] = recoveryHash(u.ID, c)
	}
	if err := s.Factors.CreateFactor(ctx, f, hashes); err != nil {
		return nil, err
	}
	if factorType == FactorSMS {
		if err := s.sendMFACode(ctx, PurposeMFASMSSetup, "factor:"+f.ID, u, f.Phone); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sendMFACode texts a one-time code bound to key.
func (s *Service) sendMFACode(ctx context.Context, purpose, key string, u *User, phone string) error {
	code := sixDigits()
	c := Challenge{Purpose: purpose, TokenHash: HashToken(key), CodeHash: codeHash(key, code), UserID: u.ID, TenantID: u.TenantID, Target: phone}
	if err := s.Challenges.Put(ctx, c, s.Messages.PhoneCodeTTL); err != nil {
		return err
	}
	return s.Notifier.Send(ctx, notify.Message{
		Channel: notify.SMS, To: phone, Kind: purpose, TenantID: u.TenantID, UserID: u.ID,
		Body: "Your sign-in code is " + code + ". Never share it.", Data: map[string]string{"code": code},
	})
}

// VerifyMFA verifies a new factor with its first code: a current TOTP code or the SMS code sent
// at setup. It returns apperr NotFound for a factor that is not the user's, Invalid (wrong_code)
// for a wrong code and RateLimited after too many attempts.
func (s *Service) VerifyMFA(ctx context.Context, userID, factorID, code string) (*Factor, error) {
	if err := s.Limiter.Check(ctx, "mfa:account:"+userID, s.Limits.LoginPerAccount); err != nil {
		return nil, err
	}
	f, err := s.Factors.Factor(ctx, userID, factorID)
	if err != nil {
		return nil, err
	}
	code = strings.TrimSpace(code)
	switch f.Type {
	case FactorTOTP:
		ok, err := s.checkTOTP(ctx, f, code)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errWrongCode()
		}
	default:
		key := "factor:" + f.ID
		_, err := s.Challenges.Consume(ctx, PurposeMFASMSSetup, HashToken(key), codeHash(key, code), s.Messages.MaxAttempts)
		if apperr.Is(err, apperr.NotFound) {
			return nil, errWrongCode()
		}
		if err != nil {
			return nil, err
		}
	}
	now := s.Now()
	if err := s.Factors.MarkFactorVerified(ctx, f.ID, now); err != nil {
		return nil, err
	}
	f.VerifiedAt = &now
	return f, nil
}

func errWrongCode() error {
	return check.Field("wrong_code", "The code is not correct.", "code", "is not correct")
}

// checkTOTP reports whether code is the factor's code within one step of now and that step was
// not used before; the step is then used.
func (s *Service) checkTOTP(ctx context.Context, f *Factor, code string) (bool, error) {
	if !sixDigitPattern.MatchString(code) {
		return false, nil
	}
	secret, err := s.Sealer.Open(f.SecretSealed, []byte(f.ID))
	if err != nil {
		return false, err
	}
	step, ok := mfa.Match(secret, code, s.Now())
	if !ok {
		return false, nil
	}
	return s.Factors.UseStep(ctx, f.ID, step)
}

// loginContext is what a pending MFA login remembers of the password step.
type loginContext struct {
	DeviceID   string `json:"device_id"`
	DeviceName string `json:"device_name"`
}

// pendMFA starts the second step of a login for a user with verified factors. When the user
// has no TOTP factor, the SMS code is texted right away.
func (s *Service) pendMFA(ctx context.Context, u *User, factors []Factor, in Login) (*MFAPending, error) {
	tok := randomToken()
	extra, err := json.Marshal(loginContext{DeviceID: in.DeviceID, DeviceName: in.DeviceName})
	if err != nil {
		return nil, err
	}
	c := Challenge{Purpose: PurposeMFALogin, TokenHash: HashToken(tok), CodeHash: "-", UserID: u.ID, TenantID: u.TenantID, Extra: string(extra)}
	if err := s.Challenges.Put(ctx, c, s.MFA.TokenTTL); err != nil {
		return nil, err
	}
	hasTOTP := false
	var sms *Factor
	for i := range factors {
		hasTOTP = hasTOTP || factors[i].Type == FactorTOTP
		if factors[i].Type == FactorSMS && sms == nil {
			sms = &factors[i]
		}
	}
	if !hasTOTP && sms != nil {
		if err := s.sendMFACode(ctx, PurposeMFASMS, tok, u, sms.Phone); err != nil {
			return nil, err
		}
	}
	return &MFAPending{Token: tok, ExpiresIn: s.MFA.TokenTTL, Factors: factors}, nil
}

func errInvalidMFAToken() error {
	return apperr.E(apperr.Unauthenticated, "invalid_mfa_token", "The MFA token is unknown, expired or already used.")
}

// ChallengeMFA completes a login with a second factor: a TOTP code, the SMS code of this login
// or a recovery code, each usable once. The mfa_token is single use and is burnt after
// Messages.MaxAttempts wrong codes. It returns apperr Invalid for a missing code,
// Unauthenticated for an unknown, expired or used token (invalid_mfa_token), a wrong code
// (invalid_mfa_code) or a user banned meanwhile, and RateLimited when the address tries too
// often.
func (s *Service) ChallengeMFA(ctx context.Context, mfaToken, code string, use Use) (*Grant, error) {
	code = strings.TrimSpace(code)
	if mfaToken == "" || code == "" || len(mfaToken) > 128 || len(code) > 32 {
		return nil, check.Field("validation_failed", "The mfa_token and the code are required.", "code", "mfa_token and code are required")
	}
	if err := s.Limiter.Check(ctx, "mfa:ip:"+use.IPAddress, s.Limits.VerifyPerIP); err != nil {
		return nil, err
	}
	key := HashToken(mfaToken)
	c, err := s.Challenges.Peek(ctx, PurposeMFALogin, key)
	if apperr.Is(err, apperr.NotFound) {
		return nil, errInvalidMFAToken()
	}
	if err != nil {
		return nil, err
	}
	u, err := s.Users.User(ctx, c.TenantID, c.UserID)
	if err != nil {
		return nil, err
	}
	ok, err := s.secondFactor(ctx, u, mfaToken, code)
	if err != nil {
		return nil, err
	}
	if !ok {
		if err := s.Challenges.Fail(ctx, PurposeMFALogin, key, s.Messages.MaxAttempts); err != nil {
			return nil, err
		}
		return nil, apperr.E(apperr.Unauthenticated, "invalid_mfa_code", "The code is not correct.")
	}
	taken, err := s.Challenges.Take(ctx, PurposeMFALogin, key)
	if err != nil {
		return nil, err
	}
	if !taken || u.Banned(s.Now()) {
		return nil, errInvalidMFAToken()
	}
	tenant, err := s.Tenants.Get(ctx, u.TenantID)
	if err != nil {
		return nil, err
	}
	var lc loginContext
	_ = json.Unmarshal([]byte(c.Extra), &lc)
	return s.openSession(ctx, u, tenant, Login{DeviceID: lc.DeviceID, DeviceName: lc.DeviceName, IPAddress: use.IPAddress, UserAgent: use.UserAgent})
}

// secondFactor checks code against the user's verified TOTP factors, this login's SMS code and
// the user's recovery codes.
func (s *Service) secondFactor(ctx context.Context, u *User, mfaToken, code string) (bool, error) {
	if !sixDigitPattern.MatchString(code) {
		return s.Factors.UseRecoveryCode(ctx, u.ID, recoveryHash(u.ID, code), s.Now())
	}
	factors, err := s.Factors.VerifiedFactors(ctx, u.ID)
	if err != nil {
		return false, err
	}
	for i := range factors {
		if factors[i].Type != FactorTOTP {
			continue
		}
		ok, err := s.checkTOTP(ctx, &factors[i], code)
		if err != nil || ok {
			return ok, err
		}
	}
	_, err = s.Challenges.Consume(ctx, PurposeMFASMS, HashToken(mfaToken), codeHash(mfaToken, code), s.Messages.MaxAttempts)
	if apperr.Is(err, apperr.NotFound) || apperr.Is(err, apperr.Invalid) {
		return false, nil
	}
	return err == nil, err
}
