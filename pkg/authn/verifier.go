package authn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"github.com/motionstudio/platform/pkg/apperr"
)

// leeway is the clock skew tolerated on exp and iat.
const leeway = 30 * time.Second

// defaultMinRefresh applies when VerifierConfig.MinRefresh is zero.
const defaultMinRefresh = 10 * time.Second

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
	// whose key id is not in the cached set (or by the first token). Default 30s.
	MinRefresh time.Duration
	// HTTPClient fetches the JWKS; default a client with a 10s timeout.
	HTTPClient *http.Client
	// Revocations, when set, refuses the tokens of revoked sessions (claim sid) and of
	// suspended tenants (claims tid and iat).
	Revocations Revocations
}

// NewVerifier verifies tokens with keys from cfg.JWKSURL, kept in a jwk.Cache that also refreshes
// the set in the background until ctx is done (every cfg.RefreshInterval), so keys the issuer
// publishes ahead of signing with them are known before the first token, and keys it withdraws
// stop being accepted. It does not fetch the
// JWKS: the first token does, so a service may start before its issuer. It fails only when the
// URL or the issuer is missing or the URL cannot be registered.
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
	var cacheOpts []jwk.CacheOption
	registerOpts := []jwk.RegisterOption{jwk.WithHTTPClient(cfg.HTTPClient)}
	if cfg.RefreshInterval > 0 {
		// The cache looks for due refreshes once per window; below a second it would not.
		cacheOpts = append(cacheOpts, jwk.WithRefreshWindow(max(cfg.RefreshInterval, time.Second)))
		registerOpts = append(registerOpts, jwk.WithRefreshInterval(cfg.RefreshInterval))
	}
	cache := jwk.NewCache(ctx, cacheOpts...)
	if err := cache.Register(cfg.JWKSURL, registerOpts...); err != nil {
		return nil, fmt.Errorf("authn: new verifier: register %s: %w", cfg.JWKSURL, err)
	}
	return &Verifier{
		issuer:   cfg.Issuer,
		audience: cfg.Audience,
		keys:     &remoteKeys{cache: cache, url: cfg.JWKSURL, minRefresh: cfg.MinRefresh},
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

// remoteKeys serves keys from a cached JWKS. The first lookup fetches the set; a key id missing
// from the cached set triggers a refetch at most once per minRefresh; until a fetch succeeds,
// lookups fetch again at most once per retryUnfetched.
type remoteKeys struct {
	cache      *jwk.Cache
	url        string
	minRefresh time.Duration
	// fetched is set once a fetch succeeded: the cache holds a set from then on.
	fetched atomic.Bool

	// refreshing lets one on-demand fetch run at a time; lookups of cached keys never wait for it.
	refreshing sync.Mutex
	// lastRefresh is the start of the last on-demand fetch in Unix nanoseconds, 0 before the first.
	lastRefresh atomic.Int64
}

func (r *remoteKeys) key(ctx context.Context, kid string) (jwk.Key, error) {
	if k, ok := r.cached(ctx, kid); ok {
		return k, nil
	}
	if err := r.refresh(ctx); err != nil && !errors.Is(err, errRefreshLimited) {
		return nil, r.unavailable(err)
	}
	if k, ok := r.cached(ctx, kid); ok {
		return k, nil
	}
	if _, err := r.set(ctx); err != nil {
		return nil, r.unavailable(err)
	}
	return nil, errUnknownKey
}

// set returns the cached JWKS without fetching; it fails until a fetch has succeeded.
func (r *remoteKeys) set(ctx context.Context) (jwk.Set, error) {
	if !r.fetched.Load() {
		// Before the first successful fetch the cache would fetch synchronously, bypassing the
		// rate limit, or answer that it holds no set.
		return nil, errors.New("authn: jwks not fetched yet")
	}
	return r.cache.Get(ctx, r.url)
}

func (r *remoteKeys) cached(ctx context.Context, kid string) (jwk.Key, bool) {
	set, err := r.set(ctx)
	if err != nil {
		return nil, false
	}
	return set.LookupKeyID(kid)
}

// interval is the least time between two on-demand fetches: minRefresh once a set is held,
// retryUnfetched before.
func (r *remoteKeys) interval() time.Duration {
	if r.fetched.Load() {
		return r.minRefresh
	}
	return min(r.minRefresh, retryUnfetched)
}

// refresh refetches the JWKS unless that happened less than interval ago.
func (r *remoteKeys) refresh(ctx context.Context) error {
	r.refreshing.Lock()
	defer r.refreshing.Unlock()
	if last := r.lastRefresh.Load(); last != 0 && time.Since(time.Unix(0, last)) < r.interval() {
		return errRefreshLimited
	}
	r.lastRefresh.Store(time.Now().UnixNano())
	if _, err := r.cache.Refresh(ctx, r.url); err != nil {
		return fmt.Errorf("authn: fetch jwks %s: %w", r.url, err)
	}
	r.fetched.Store(true)
	return nil
}

// unavailable reports that keys cannot be had right now, with a hint when to retry.
func (r *remoteKeys) unavailable(cause error) *apperr.Error {
	e := apperr.Wrap(cause, apperr.Unavailable, "keys_unavailable", "The token cannot be checked right now.")
	wait := r.interval() - time.Since(time.Unix(0, r.lastRefresh.Load()))
	e.RetryAfter = max(wait, time.Second)
	return e
}
