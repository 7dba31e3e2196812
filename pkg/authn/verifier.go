package authn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lestrrat-go/httpcc"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"golang.org/x/sync/singleflight"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/service"
)

// leeway is the clock skew tolerated on exp and iat.
const leeway = 30 * time.Second

// defaultMinRefresh applies when VerifierConfig.MinRefresh is zero.
const defaultMinRefresh = 10 * time.Second

// defaultRefreshInterval applies when VerifierConfig.RefreshInterval is zero.
const defaultRefreshInterval = 15 * time.Minute

// accepted are the algorithms a token may be signed with; its key must be published for the
// same one.
var accepted = map[jwa.SignatureAlgorithm]bool{jwa.EdDSA: true, jwa.ES256: true, jwa.RS256: true}

var (
	errUnknownKey     = errors.New("authn: unknown key id")
	errRefreshLimited = errors.New("authn: jwks refresh rate limited")
)

// keySource finds the public key for a key id.
type keySource interface {
	key(ctx context.Context, kid string) (jwk.Key, error)
}

// Verifier checks tokens against a JWKS, an expected issuer and, when set, an expected
// audience, and refuses the tokens of revoked sessions when it knows of them.
type Verifier struct {
	issuer   string
	audience string
	keys     keySource
	verified *verifiedCache
	revoked  Revocations
}

// Revocations tells which sessions were revoked before their tokens expire, and which tenants
// had their tokens issued before a time refused (a suspension) (see pkg/revocation).
type Revocations interface {
	Revoked(sessionID string) bool
	TenantRevoked(tenantID string, issuedAt time.Time) bool
}

// KeyLookup finds a public key by key id; a jwk.Set is one.
type KeyLookup interface {
	LookupKeyID(kid string) (jwk.Key, bool)
}

// VerifierConfig locates the issuer's JWKS.
type VerifierConfig struct {
	JWKSURL string
	Issuer  string
	// Audience, when set, must be one of a token's aud values.
	Audience string
	// RefreshInterval is how often the JWKS is fetched in the background. Zero means every
	// 15 minutes, or the response's Cache-Control max-age when longer.
	RefreshInterval time.Duration
	// MinRefresh is the least time between two on-demand JWKS fetches, those caused by a token
	// whose key id is not in the set held (or by the first token). Default 10s.
	MinRefresh time.Duration
	// HTTPClient fetches the JWKS; default a client with a 10s timeout.
	HTTPClient *http.Client
	// Revocations, when set, refuses the tokens of revoked sessions (claim sid) and of
	// suspended tenants (claims tid and iat).
	Revocations Revocations
}

// Remote is the configuration of a service that accepts identity-svc's tokens, read from the
// environment.
type Remote struct {
	// JWKSURL is identity-svc's key set, fetched lazily and cached.
	JWKSURL string `env:"JWKS_URL" default:"http://127.0.0.1:8081/.well-known/jwks.json"`
	// JWKSRefresh is how often the key set is fetched in the background, so keys identity-svc
	// publishes ahead of a rotation are known before they sign; keep it at most identity's
	// SIGNING_KEY_PREPUBLISH minus the JWKS cache lifetime.
	JWKSRefresh time.Duration `env:"JWKS_REFRESH_INTERVAL" default:"5m"`
	// Issuer is the iss every accepted token must carry (identity-svc's JWT_ISSUER).
	Issuer string `env:"JWT_ISSUER" default:"http://127.0.0.1:8081"`
	// Audience must be one of the aud values of every accepted token.
	Audience string `env:"JWT_AUDIENCE" default:"motionstudio"`
}

// NewVerifier verifies tokens with keys from cfg.JWKSURL, held in memory and refetched in the
// background until ctx is done (every cfg.RefreshInterval), so keys the issuer publishes ahead
// of signing with them are known before the first token, and keys it withdraws stop being
// accepted. It does not fetch the JWKS: the first token does, so a service may start before its
// issuer. It fails only when the URL or the issuer is missing.
func NewVerifier(ctx context.Context, cfg VerifierConfig) (*Verifier, error) {
	if cfg.JWKSURL == "" || cfg.Issuer == "" {
		return nil, errors.New("authn: new verifier: jwks url and issuer are required")
	}
	if cfg.MinRefresh <= 0 {
		cfg.MinRefresh = defaultMinRefresh
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	keys := &remoteKeys{client: cfg.HTTPClient, url: cfg.JWKSURL, minRefresh: cfg.MinRefresh}
	if cfg.RefreshInterval > 0 {
		go keys.follow(ctx, cfg.RefreshInterval, false)
	} else {
		go keys.follow(ctx, defaultRefreshInterval, true)
	}
	return &Verifier{
		issuer:   cfg.Issuer,
		audience: cfg.Audience,
		keys:     keys,
		verified: newVerifiedCache(),
		revoked:  cfg.Revocations,
	}, nil
}

// NewStaticVerifier verifies tokens with the keys keys finds (a jwk.Set, or a key ring that
// changes), for a service that checks the tokens it issues itself; an empty audience is not
// checked.
func NewStaticVerifier(keys KeyLookup, issuer, audience string) *Verifier {
	return &Verifier{issuer: issuer, audience: audience, keys: staticKeys{set: keys}, verified: newVerifiedCache()}
}

// Verify parses raw and checks its signature (EdDSA, ES256 or RS256, as its key is published
// for), expiry and issuance time (30s leeway), issuer, audience and token_use. It returns an
// apperr Unauthenticated error when the token is missing, malformed, badly signed, expired,
// from another issuer or for another audience, signed with an unknown key, of a revoked
// session or of a tenant suspended after it was issued, and an apperr Unavailable error (with RetryAfter) when the key set cannot be
// fetched, either before any fetch has succeeded or while refetching it for a key id missing
// from the cached set. A token verified in the last minute is answered from memory until it
// expires; its session and tenant are checked against the revocations on every call.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Claims, error) {
	c, err := v.verify(ctx, raw)
	if err != nil {
		return nil, err
	}
	if v.revoked != nil && ((c.SessionID != "" && v.revoked.Revoked(c.SessionID)) ||
		(c.TenantID != "" && v.revoked.TenantRevoked(c.TenantID, c.IssuedAt))) {
		return nil, apperr.E(apperr.Unauthenticated, "session_revoked", "The session has been revoked.")
	}
	return c, nil
}

// verify is Verify without the revocations.
func (v *Verifier) verify(ctx context.Context, raw string) (*Claims, error) {
	if raw == "" {
		return nil, apperr.E(apperr.Unauthenticated, "missing_token", "A bearer token is required.")
	}
	now := time.Now()
	if c, ok := v.verified.get(raw, now); ok {
		return c, nil
	}
	if strings.Count(raw, ".") != 2 {
		return nil, invalidToken(errors.New("authn: not a compact jws"))
	}
	msg, err := jws.Parse([]byte(raw), jws.WithCompact())
	if err != nil {
		return nil, invalidToken(fmt.Errorf("authn: parse jws: %w", err))
	}
	sigs := msg.Signatures()
	if len(sigs) != 1 {
		return nil, invalidToken(errors.New("authn: expected exactly one signature"))
	}
	hdr := sigs[0].ProtectedHeaders()
	alg := hdr.Algorithm()
	if !accepted[alg] {
		return nil, invalidToken(fmt.Errorf("authn: algorithm %q refused", alg))
	}
	if hdr.KeyID() == "" {
		return nil, invalidToken(errors.New("authn: token has no kid"))
	}
	key, err := v.keys.key(ctx, hdr.KeyID())
	if err != nil {
		if errors.Is(err, errUnknownKey) {
			return nil, invalidToken(fmt.Errorf("%w %q", err, hdr.KeyID()))
		}
		return nil, err
	}
	if key.Algorithm().String() != alg.String() {
		return nil, invalidToken(fmt.Errorf("authn: algorithm %q is not the one of key %q", alg, hdr.KeyID()))
	}

	opts := []jwt.ParseOption{
		jwt.WithKey(alg, key),
		jwt.WithValidate(true),
		jwt.WithIssuer(v.issuer),
		jwt.WithRequiredClaim(jwt.ExpirationKey),
		jwt.WithAcceptableSkew(leeway),
	}
	if v.audience != "" {
		opts = append(opts, jwt.WithAudience(v.audience))
	}
	tok, err := jwt.Parse([]byte(raw), opts...)
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired()) {
			return nil, apperr.Wrap(err, apperr.Unauthenticated, "token_expired", "The token has expired.")
		}
		return nil, invalidToken(fmt.Errorf("authn: verify: %w", err))
	}
	c, err := claimsOf(tok)
	if err != nil {
		return nil, invalidToken(err)
	}
	v.verified.put(raw, c, now)
	return c, nil
}

func invalidToken(cause error) *apperr.Error {
	return apperr.Wrap(cause, apperr.Unauthenticated, "invalid_token", "The token is not valid.")
}

// claimsOf reads the platform claims; it fails when a claim has the wrong type or token_use is
// unknown.
func claimsOf(tok jwt.Token) (*Claims, error) {
	c := &Claims{
		Issuer:    tok.Issuer(),
		Subject:   tok.Subject(),
		ID:        tok.JwtID(),
		Audience:  tok.Audience(),
		IssuedAt:  tok.IssuedAt(),
		ExpiresAt: tok.Expiration(),
	}
	var scope string
	strs := map[string]*string{claimTenantID: &c.TenantID, claimSessionID: &c.SessionID,
		claimTokenUse: &c.TokenUse, claimScope: &scope}
	for name, dst := range strs {
		if err := privateClaim(tok, name, dst); err != nil {
			return nil, err
		}
	}
	bools := map[string]*bool{claimAdmin: &c.Admin, claimTenantAdmin: &c.TenantAdmin}
	for name, dst := range bools {
		if err := privateClaim(tok, name, dst); err != nil {
			return nil, err
		}
	}
	if c.TokenUse != TokenUseAccess && c.TokenUse != TokenUseService {
		return nil, fmt.Errorf("authn: unknown token_use %q", c.TokenUse)
	}
	c.Scopes = strings.Fields(scope)
	return c, nil
}

// privateClaim copies claim name into dst when present; a value of another type is an error.
func privateClaim[T any](tok jwt.Token, name string, dst *T) error {
	v, ok := tok.Get(name)
	if !ok {
		return nil
	}
	t, ok := v.(T)
	if !ok {
		return fmt.Errorf("authn: claim %s has type %T", name, v)
	}
	*dst = t
	return nil
}

// staticKeys serves keys from a set the caller keeps.
type staticKeys struct{ set KeyLookup }

func (s staticKeys) key(_ context.Context, kid string) (jwk.Key, error) {
	if k, ok := s.set.LookupKeyID(kid); ok {
		return k, nil
	}
	return nil, errUnknownKey
}

// retryUnfetched is the least time between two fetches while none has succeeded (the issuer
// was unreachable when the first tokens came): short, since no token can be checked meanwhile,
// and still at most one fetch a second however many tokens arrive.
const retryUnfetched = time.Second

// remoteKeys serves keys from the issuer's JWKS, held in memory: a lookup reads the set held
// and never waits for a fetch. The first lookup fetches the set; a key id missing from it
// triggers a refetch at most once per minRefresh (once per retryUnfetched until a fetch
// succeeded). Lookups that need a fetch while one runs wait for that one's outcome, or until
// their own context is done, rather than start another (a slow issuer must not queue every
// request behind a fetch each).
type remoteKeys struct {
	client     *http.Client
	url        string
	minRefresh time.Duration
	// set is the JWKS last fetched, nil until a fetch succeeded.
	set    atomic.Pointer[jwk.Set]
	flight singleflight.Group
	// lastRefresh is the start of the last on-demand fetch in Unix nanoseconds, 0 before the first.
	lastRefresh atomic.Int64
}

func (r *remoteKeys) key(ctx context.Context, kid string) (jwk.Key, error) {
	if k, ok := r.cached(kid); ok {
		return k, nil
	}
	if err := r.refresh(ctx); err != nil && !errors.Is(err, errRefreshLimited) {
		return nil, r.unavailable(err)
	}
	if k, ok := r.cached(kid); ok {
		return k, nil
	}
	if r.set.Load() == nil {
		return nil, r.unavailable(errors.New("authn: jwks not fetched yet"))
	}
	return nil, errUnknownKey
}

// cached looks kid up in the set held.
func (r *remoteKeys) cached(kid string) (jwk.Key, bool) {
	set := r.set.Load()
	if set == nil {
		return nil, false
	}
	return (*set).LookupKeyID(kid)
}

// interval is the least time between two on-demand fetches: minRefresh once a set is held,
// retryUnfetched before.
func (r *remoteKeys) interval() time.Duration {
	if r.set.Load() != nil {
		return r.minRefresh
	}
	return min(r.minRefresh, retryUnfetched)
}

// refresh refetches the JWKS unless an on-demand fetch started less than interval ago. A caller
// that comes while a fetch runs waits for its outcome, or until ctx is done; the fetch itself
// is bounded by the HTTP client's timeout, not by the first caller's context.
func (r *remoteKeys) refresh(ctx context.Context) error {
	done := r.flight.DoChan("", func() (any, error) {
		if last := r.lastRefresh.Load(); last != 0 && time.Since(time.Unix(0, last)) < r.interval() {
			return nil, errRefreshLimited
		}
		r.lastRefresh.Store(time.Now().UnixNano())
		_, err := r.fetch(context.WithoutCancel(ctx))
		return nil, err
	})
	select {
	case <-ctx.Done():
		return fmt.Errorf("authn: waiting for the jwks: %w", ctx.Err())
	case res := <-done:
		return res.Err
	}
}

// maxJWKSBytes bounds the JWKS document read.
const maxJWKSBytes = 1 << 20

// fetch reads the JWKS and holds it. It answers how long the issuer lets it be kept
// (Cache-Control max-age; 0 when it says nothing).
func (r *remoteKeys) fetch(ctx context.Context) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return 0, fmt.Errorf("authn: fetch jwks %s: %w", r.url, err)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("authn: fetch jwks %s: %w", r.url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("authn: fetch jwks %s: status %d", r.url, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
	if err != nil {
		return 0, fmt.Errorf("authn: fetch jwks %s: %w", r.url, err)
	}
	set, err := jwk.Parse(body)
	if err != nil {
		return 0, fmt.Errorf("authn: parse jwks %s: %w", r.url, err)
	}
	r.set.Store(&set)
	var maxAge time.Duration
	if cc, err := httpcc.ParseResponse(resp.Header.Get("Cache-Control")); err == nil {
		if secs, ok := cc.MaxAge(); ok {
			maxAge = time.Duration(secs) * time.Second // #nosec G115 -- an issuer's max-age in seconds
		}
	}
	return maxAge, nil
}

// follow refetches the JWKS every interval (or, when honorMaxAge, after the issuer's max-age
// when longer) until ctx is done; a failed fetch is tried again after minRefresh at most, and
// the set held stays.
func (r *remoteKeys) follow(ctx context.Context, every time.Duration, honorMaxAge bool) {
	for next := every; service.Sleep(ctx, next) == nil; {
		next = min(every, r.minRefresh)
		if maxAge, err := r.fetch(ctx); err == nil {
			next = every
			if honorMaxAge {
				next = max(every, maxAge)
			}
		}
	}
}

// unavailable reports that keys cannot be had right now, with a hint when to retry.
func (r *remoteKeys) unavailable(cause error) *apperr.Error {
	e := apperr.Wrap(cause, apperr.Unavailable, "keys_unavailable", "The token cannot be checked right now.")
	wait := r.interval() - time.Since(time.Unix(0, r.lastRefresh.Load()))
	e.RetryAfter = max(wait, time.Second)
	return e
}
