package authn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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

// The signing algorithms a Signer uses and a Verifier accepts.
const (
	AlgEdDSA = "EdDSA"
	AlgES256 = "ES256"
	AlgRS256 = "RS256"
)

// DefaultAudience is the aud of the platform's tokens unless a deployment configures another.
const DefaultAudience = "motionstudio"

// Signer issues tokens with one key: Ed25519 (EdDSA), ECDSA P-256 (ES256) or RSA of at least
// 2048 bits (RS256). It builds the compact JWS itself (the header jwx makes for the key, then the
// claims encoded as jwx encodes them: sorted names, HTML-escaped strings, numeric dates in
// seconds), so a token is the one jwx would sign (byte for byte with Ed25519, which is
// deterministic) at a fraction of the cost.
type Signer struct {
	key    crypto.Signer
	alg    jwa.SignatureAlgorithm
	public jwk.Key
	issuer string
	// header is the base64url protected header jwx makes for the key: alg, kid and typ.
	header string
}

// NewSigner prepares key under the key id kid for tokens from issuer; the key's type chooses
// the algorithm. It fails when the key is of another type (or RSA under 2048 bits, or ECDSA on
// another curve), or the kid or the issuer is missing.
func NewSigner(key crypto.Signer, kid, issuer string) (*Signer, error) {
	alg, err := algorithmOf(key)
	if err != nil {
		return nil, fmt.Errorf("authn: new signer: %w", err)
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
			jwk.AlgorithmKey: alg,
			jwk.KeyUsageKey:  jwk.ForSignature,
		}); err != nil {
			return nil, fmt.Errorf("authn: new signer: %w", err)
		}
	}
	// The header is taken from a token jwx signs, so it stays what jwx makes of the key.
	probe, err := jwt.NewBuilder().Subject("probe").Build()
	if err != nil {
		return nil, fmt.Errorf("authn: new signer: %w", err)
	}
	signed, err := jwt.Sign(probe, jwt.WithKey(alg, priv))
	if err != nil {
		return nil, fmt.Errorf("authn: new signer: %w", err)
	}
	header, _, _ := strings.Cut(string(signed), ".")
	return &Signer{key: key, alg: alg, public: pub, issuer: issuer, header: header}, nil
}

// algorithmOf is the JWS algorithm of a key's type.
func algorithmOf(key crypto.Signer) (jwa.SignatureAlgorithm, error) {
	switch k := key.(type) {
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return "", errors.New("ed25519 key of the wrong size")
		}
		return jwa.EdDSA, nil
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return "", errors.New("ecdsa key is not on P-256")
		}
		return jwa.ES256, nil
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return "", errors.New("rsa key under 2048 bits")
		}
		return jwa.RS256, nil
	default:
		return "", fmt.Errorf("key type %T is not ed25519, ecdsa p-256 or rsa", key)
	}
}

// Algorithm is the JWS alg of the signer's tokens.
func (s *Signer) Algorithm() string { return s.alg.String() }

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
// and the signer's alg. It fails when ExpiresAt is zero or TokenUse is neither TokenUseAccess nor
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

	payload := appendClaims(make([]byte, 0, 320), &c)
	enc := base64.RawURLEncoding
	buf := make([]byte, 0, len(s.header)+1+enc.EncodedLen(len(payload))+1+enc.EncodedLen(512))
	buf = append(buf, s.header...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	sig, err := s.sign(buf)
	if err != nil {
		return "", err
	}
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig)
	return string(buf), nil
}

// sign signs the JWS signing input with the signer's algorithm: Ed25519 as is, ES256 as the
// fixed-size r||s of RFC 7518 section 3.4, RS256 as PKCS #1 v1.5 over SHA-256.
func (s *Signer) sign(input []byte) ([]byte, error) {
	switch k := s.key.(type) {
	case ed25519.PrivateKey:
		return ed25519.Sign(k, input), nil
	case *ecdsa.PrivateKey:
		digest := sha256.Sum256(input)
		r, ss, err := ecdsa.Sign(rand.Reader, k, digest[:])
		if err != nil {
			return nil, fmt.Errorf("authn: sign: %w", err)
		}
		sig := make([]byte, 64)
		r.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
		return sig, nil
	default:
		digest := sha256.Sum256(input)
		sig, err := rsa.SignPKCS1v15(rand.Reader, k.(*rsa.PrivateKey), crypto.SHA256, digest[:])
		if err != nil {
			return nil, fmt.Errorf("authn: sign: %w", err)
		}
		return sig, nil
	}
}

// appendClaims appends the JSON object of c as jwx encodes a token: claim names sorted, empty
// optional claims left out, false flags left out, dates as Unix seconds.
func appendClaims(b []byte, c *Claims) []byte {
	b = append(b, '{')
	if c.Admin {
		b = append(b, `"adm":true`...)
	}
	if len(c.Audience) > 0 {
		if c.Admin {
			b = append(b, ',')
		}
		// Marshalling strings cannot fail.
		aud, _ := json.Marshal(c.Audience)
		b = append(b, `"aud":`...)
		b = append(b, aud...)
		b = append(b, ',')
	} else if c.Admin {
		b = append(b, ',')
	}
	b = append(b, `"exp":`...)
	b = strconv.AppendInt(b, c.ExpiresAt.Unix(), 10)
	b = append(b, `,"iat":`...)
	b = strconv.AppendInt(b, c.IssuedAt.Unix(), 10)
	b = appendStringClaim(b, jwt.IssuerKey, c.Issuer)
	b = appendStringClaim(b, jwt.JwtIDKey, c.ID)
	if len(c.Scopes) > 0 {
		b = appendStringClaim(b, claimScope, strings.Join(c.Scopes, " "))
	}
	b = appendStringClaim(b, claimSessionID, c.SessionID)
	b = appendStringClaim(b, jwt.SubjectKey, c.Subject)
	if c.TenantAdmin {
		b = append(b, `,"`+claimTenantAdmin+`":true`...)
	}
	b = appendStringClaim(b, claimTenantID, c.TenantID)
	b = appendStringClaim(b, claimTokenUse, c.TokenUse)
	return append(b, '}')
}

// appendStringClaim appends ,"name":"v" unless v is empty; v is escaped as encoding/json
// escapes it (jwx's encoder), the common plain ASCII without copying through json.Marshal.
func appendStringClaim(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	for i := 0; i < len(v); i++ {
		if ch := v[i]; ch < 0x20 || ch >= utf8.RuneSelf || ch == '"' || ch == '\\' || ch == '<' || ch == '>' || ch == '&' {
			// Marshalling a string cannot fail.
			quoted, _ := json.Marshal(v)
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, v...)
	return append(b, '"')
}

// PublicKey is the signer's public key as a JWK with kid, alg and use sig.
func (s *Signer) PublicKey() jwk.Key { return s.public }

// PublicSet is the JWKS holding the signer's public key (kid, alg, use sig), for
// GET /.well-known/jwks.json and NewStaticVerifier. Each call returns a new set, so callers may
// add the keys of other signers (during a key rotation) to it.
func (s *Signer) PublicSet() jwk.Set {
	set := jwk.NewSet()
	// Adding one key to an empty set cannot fail.
	_ = set.AddKey(s.public)
	return set
}
