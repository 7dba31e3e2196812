package authn

import (
	"crypto/ed25519"
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

// Signer issues tokens with one Ed25519 key. It builds the compact JWS itself (the header jwx
// makes for the key, then the claims encoded as jwx encodes them: sorted names, HTML-escaped
// strings, numeric dates in seconds), so a token is byte for byte the one jwx would sign
// (Ed25519 is deterministic) at a fraction of the cost.
type Signer struct {
	raw    ed25519.PrivateKey
	public jwk.Key
	issuer string
	// header is the base64url protected header jwx makes for the key: alg, kid and typ.
	header string
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
	// The header is taken from a token jwx signs, so it stays what jwx makes of the key.
	probe, err := jwt.NewBuilder().Subject("probe").Build()
	if err != nil {
		return nil, fmt.Errorf("authn: new signer: %w", err)
	}
	signed, err := jwt.Sign(probe, jwt.WithKey(jwa.EdDSA, priv))
	if err != nil {
		return nil, fmt.Errorf("authn: new signer: %w", err)
	}
	header, _, _ := strings.Cut(string(signed), ".")
	return &Signer{raw: key, public: pub, issuer: issuer, header: header}, nil
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

	payload := appendClaims(make([]byte, 0, 320), &c)
	enc := base64.RawURLEncoding
	buf := make([]byte, 0, len(s.header)+1+enc.EncodedLen(len(payload))+1+enc.EncodedLen(ed25519.SignatureSize))
	buf = append(buf, s.header...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	sig := ed25519.Sign(s.raw, buf)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig)
	return string(buf), nil
}

// appendClaims appends the JSON object of c as jwx encodes a token: claim names sorted, empty
// optional claims left out, false flags left out, dates as Unix seconds.
func appendClaims(b []byte, c *Claims) []byte {
	b = append(b, '{')
	if c.Admin {
		b = append(b, `"adm":true,`...)
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

// PublicSet is the JWKS holding the signer's public key (kid, alg EdDSA, use sig), for
// GET /.well-known/jwks.json and NewStaticVerifier. Each call returns a new set, so callers may
// add the keys of other signers (during a key rotation) to it.
func (s *Signer) PublicSet() jwk.Set {
	set := jwk.NewSet()
	// Adding one key to an empty set cannot fail.
	_ = set.AddKey(s.public)
	return set
}
