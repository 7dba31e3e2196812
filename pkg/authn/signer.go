package authn

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// The private claim names.
const (
	claimTenantID    = "tid"
	claimSessionID   = "sid"
	claimAdmin       = "adm"
	claimTenantAdmin = "tadm"
	claimTokenUse    = "token_use"
	claimScope       = "scope"
)

// Signer issues tokens with one Ed25519 key.
type Signer struct {
	key    jwk.Key
	public jwk.Key
	issuer string
}

// NewSigner prepares key under the key id kid for tokens from issuer. It fails when the key,
// the kid or the issuer is missing.
func NewSigner(key ed25519.PrivateKey, kid, issuer string) (*Signer, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, errors.New("authn: new signer: key is not an ed25519 private key")
	}
	if kid == "" || issuer == "" {
		return nil, errors.New("authn: new signer: kid and issuer are required")
	}
	priv, err := jwk.FromRaw(key)
	if err != nil {
		return nil, fmt.Errorf("authn: new signer: %w", err)
	}
	pub, err := jwk.FromRaw(key.Public())
	if err != nil {
		return nil, fmt.Errorf("authn: new signer: %w", err)
	}
	for _, k := range []jwk.Key{priv, pub} {
		if err := setAll(k, map[string]any{
			jwk.KeyIDKey:     kid,
			jwk.AlgorithmKey: jwa.EdDSA,
			jwk.KeyUsageKey:  jwk.ForSignature,
		}); err != nil {
			return nil, fmt.Errorf("authn: new signer: %w", err)
		}
	}
	return &Signer{key: priv, public: pub, issuer: issuer}, nil
}

// setAll sets each field of a token or key.
func setAll(t interface{ Set(string, any) error }, fields map[string]any) error {
	for name, v := range fields {
		if err := t.Set(name, v); err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
	}
	return nil
}

// Sign issues a compact JWT for c. It fills iss with the signer's issuer when empty, iat with
// the current time when zero and jti with a UUID v7 when empty; the header carries the key id
// and alg EdDSA. It fails when ExpiresAt is zero or TokenUse is neither TokenUseAccess nor
// TokenUseService.
func (s *Signer) Sign(c Claims) (string, error) {
	if c.ExpiresAt.IsZero() {
		return "", errors.New("authn: sign: exp is required")
	}
	if c.TokenUse != TokenUseAccess && c.TokenUse != TokenUseService {
		return "", fmt.Errorf("authn: sign: unknown token_use %q", c.TokenUse)
	}
	if c.Issuer == "" {
		c.Issuer = s.issuer
	}
	if c.IssuedAt.IsZero() {
		c.IssuedAt = time.Now()
	}
	if c.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return "", fmt.Errorf("authn: sign: jti: %w", err)
		}
		c.ID = id.String()
	}

	fields := map[string]any{
		jwt.IssuerKey:     c.Issuer,
		jwt.JwtIDKey:      c.ID,
		jwt.IssuedAtKey:   c.IssuedAt,
		jwt.ExpirationKey: c.ExpiresAt,
		claimTokenUse:     c.TokenUse,
	}
	optional := map[string]string{jwt.SubjectKey: c.Subject, claimTenantID: c.TenantID, claimSessionID: c.SessionID,
		claimScope: strings.Join(c.Scopes, " ")}
	for name, v := range optional {
		if v != "" {
			fields[name] = v
		}
	}
	if c.Admin {
		fields[claimAdmin] = true
	}
	if c.TenantAdmin {
		fields[claimTenantAdmin] = true
	}
	tok := jwt.New()
	if err := setAll(tok, fields); err != nil {
		return "", fmt.Errorf("authn: sign: %w", err)
	}
	raw, err := jwt.Sign(tok, jwt.WithKey(jwa.EdDSA, s.key))
	if err != nil {
		return "", fmt.Errorf("authn: sign: %w", err)
	}
	return string(raw), nil
}

// PublicSet is the JWKS holding the signer's public key (kid, alg EdDSA, use sig), for
// GET /.well-known/jwks.json and NewStaticVerifier. Each call returns a new set, so callers may
// add the keys of other signers (during a key rotation) to it.
func (s *Signer) PublicSet() jwk.Set {
	set := jwk.NewSet()
	// Adding one key to an empty set cannot fail.
	_ = set.AddKey(s.public)
	return set
}
