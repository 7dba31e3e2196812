package token

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/service"
)

// A signing key's life, derived from the activation times of the keys in the store, so that
// every replica that has read the same rows agrees at any instant:
//   - next: published in the JWKS, not signing yet (its activation is in the future);
//   - active: the key with the latest activation in the past; it signs every new token;
//   - retired: replaced by a newer active key, still published until every token it signed
//     has expired (Retention after its successor's activation);
//   - withdrawn: no longer published; its tokens are refused.
const (
	StateNext      = "next"
	StateActive    = "active"
	StateRetired   = "retired"
	StateWithdrawn = "withdrawn"
)

// SealedKey is a signing key as the store keeps it: the private key PKCS #8 DER, sealed.
type SealedKey struct {
	ID          string // kid
	Alg         string
	Sealed      []byte
	CreatedAt   time.Time
	ActivatesAt time.Time
}

// KeyStore keeps the signing keys of every replica.
type KeyStore interface {
	// List answers every key, oldest activation first.
	List(ctx context.Context) ([]SealedKey, error)
	// AddIf adds k when cond, given every key, holds; the check and the insert are serialized
	// across replicas. It reports whether k was added.
	AddIf(ctx context.Context, k SealedKey, cond func(existing []SealedKey) bool) (bool, error)
}

// Sealer encrypts private keys at rest, bound to associated data (the key id).
type Sealer interface {
	Seal(plain, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// RingConfig says how keys are made and how long they are published.
type RingConfig struct {
	// Issuer is the iss of every token.
	Issuer string
	// Alg is the algorithm of the keys Rotate makes: authn.AlgEdDSA, AlgES256 or AlgRS256.
	Alg string
	// Prepublish is how long a new key is published before it signs: at least the verifiers'
	// JWKS refresh interval plus any cache in front of the JWKS.
	Prepublish time.Duration
	// Retention is how long a retired key stays published: the longest token lifetime plus
	// clock skew plus the reload interval.
	Retention time.Duration
}

// KeyInfo describes a key for operators; it holds no secret.
type KeyInfo struct {
	ID          string
	Alg         string
	State       string
	CreatedAt   time.Time
	ActivatesAt time.Time
	RetiredAt   *time.Time
	WithdrawnAt *time.Time
}

// ringKey is a key opened from the store.
type ringKey struct {
	meta   SealedKey
	signer *authn.Signer
}

// Ring holds the signing keys read from the store: the active one signs, the published ones
// verify and make up the JWKS. Every replica reloads it (Run), so a key added by one replica
// or by the operator CLI is seen by all within the reload interval. Safe for concurrent use.
type Ring struct {
	store  KeyStore
	sealer Sealer
	cfg    RingConfig
	now    func() time.Time

	mu   sync.RWMutex
	keys []ringKey // oldest activation first
}

// NewRing returns an empty Ring; Load or Import fill it.
func NewRing(store KeyStore, sealer Sealer, cfg RingConfig, now func() time.Time) (*Ring, error) {
	if err := checkAlg(cfg.Alg); err != nil {
		return nil, err
	}
	return &Ring{store: store, sealer: sealer, cfg: cfg, now: now}, nil
}

// Import makes key the first signing key, active at once, when the store holds none (the
// SIGNING_KEY of deployments from before key rotation, or the first start), then loads the
// ring. A key of another algorithm than the configured one is replaced by a fresh key of that
// algorithm.
func (r *Ring) Import(ctx context.Context, key crypto.Signer) error {
	if err := r.Load(ctx); err != nil {
		return err
	}
	r.mu.RLock()
	held := len(r.keys)
	r.mu.RUnlock()
	if held > 0 {
		return nil
	}
	if alg, err := algorithmOf(key); err != nil || alg != r.cfg.Alg {
		if key, err = GenerateKey(r.cfg.Alg); err != nil {
			return err
		}
	}
	k, err := r.seal(key, time.Unix(0, 0).UTC())
	if err != nil {
		return err
	}
	if _, err := r.store.AddIf(ctx, k, func(existing []SealedKey) bool { return len(existing) == 0 }); err != nil {
		return fmt.Errorf("token: import signing key: %w", err)
	}
	return r.Load(ctx)
}

// Rotate adds a new key of the configured algorithm that signs from Prepublish on; the active
// key then retires. It returns the new key.
func (r *Ring) Rotate(ctx context.Context) (KeyInfo, error) {
	return r.add(ctx, func([]SealedKey) bool { return true })
}

// RotateIfDue rotates when the newest key activated (or activates) every or longer ago, so
// that replicas running it together add one key.
func (r *Ring) RotateIfDue(ctx context.Context, every time.Duration) (bool, error) {
	_, err := r.add(ctx, func(existing []SealedKey) bool {
		return len(existing) > 0 && !r.now().Before(existing[len(existing)-1].ActivatesAt.Add(every))
	})
	if errors.Is(err, errNotAdded) {
		return false, nil
	}
	return err == nil, err
}

var errNotAdded = errors.New("token: key not added")

func (r *Ring) add(ctx context.Context, cond func([]SealedKey) bool) (KeyInfo, error) {
	key, err := GenerateKey(r.cfg.Alg)
	if err != nil {
		return KeyInfo{}, err
	}
	k, err := r.seal(key, r.now().Add(r.cfg.Prepublish))
	if err != nil {
		return KeyInfo{}, err
	}
	added, err := r.store.AddIf(ctx, k, cond)
	if err != nil {
		return KeyInfo{}, fmt.Errorf("token: add signing key: %w", err)
	}
	if !added {
		return KeyInfo{}, errNotAdded
	}
	if err := r.Load(ctx); err != nil {
		return KeyInfo{}, err
	}
	for _, info := range r.List() {
		if info.ID == k.ID {
			return info, nil
		}
	}
	return KeyInfo{}, fmt.Errorf("token: key %s not found after adding it", k.ID)
}

func (r *Ring) seal(key crypto.Signer, activates time.Time) (SealedKey, error) {
	kid, err := KeyID(key.Public())
	if err != nil {
		return SealedKey{}, err
	}
	alg, err := algorithmOf(key)
	if err != nil {
		return SealedKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return SealedKey{}, fmt.Errorf("token: encode signing key: %w", err)
	}
	sealed, err := r.sealer.Seal(der, []byte(kid))
	if err != nil {
		return SealedKey{}, fmt.Errorf("token: seal signing key: %w", err)
	}
	return SealedKey{ID: kid, Alg: alg, Sealed: sealed, CreatedAt: r.now(), ActivatesAt: activates}, nil
}

// Load reads the keys from the store, opening the ones not held yet.
func (r *Ring) Load(ctx context.Context) error {
	stored, err := r.store.List(ctx)
	if err != nil {
		return fmt.Errorf("token: load signing keys: %w", err)
	}
	r.mu.RLock()
	held := make(map[string]*authn.Signer, len(r.keys))
	for _, k := range r.keys {
		held[k.meta.ID] = k.signer
	}
	r.mu.RUnlock()
	keys := make([]ringKey, 0, len(stored))
	for _, s := range stored {
		signer, ok := held[s.ID]
		if !ok {
			if signer, err = r.open(s); err != nil {
				return err
			}
		}
		keys = append(keys, ringKey{meta: s, signer: signer})
	}
	slices.SortStableFunc(keys, func(a, b ringKey) int { return a.meta.ActivatesAt.Compare(b.meta.ActivatesAt) })
	r.mu.Lock()
	r.keys = keys
	r.mu.Unlock()
	return nil
}

func (r *Ring) open(s SealedKey) (*authn.Signer, error) {
	der, err := r.sealer.Open(s.Sealed, []byte(s.ID))
	if err != nil {
		return nil, fmt.Errorf("token: open signing key %s: %w", s.ID, err)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("token: parse signing key %s: %w", s.ID, err)
	}
	key, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("token: signing key %s is a %T", s.ID, k)
	}
	return authn.NewSigner(key, s.ID, r.cfg.Issuer)
}

// Run reloads the ring every reload until ctx is done, and rotates when rotateEvery (when
// positive) has passed since the newest key's activation. A failed reload keeps the keys held
// and is logged by report; it does not stop the service.
func (r *Ring) Run(ctx context.Context, reload, rotateEvery time.Duration, report func(error)) error {
	return service.Every(ctx, reload, func(ctx context.Context) {
		if rotateEvery > 0 {
			if _, err := r.RotateIfDue(ctx, rotateEvery); err != nil {
				report(err)
			}
		}
		if err := r.Load(ctx); err != nil {
			report(err)
		}
	})
}

// state answers the state of keys[i] at now, with its retirement and withdrawal times.
func (r *Ring) state(keys []ringKey, i int, now time.Time) (state string, retired, withdrawn *time.Time) {
	k := keys[i].meta
	if now.Before(k.ActivatesAt) {
		return StateNext, nil, nil
	}
	// A key retires when the next key activates.
	if i+1 < len(keys) && !now.Before(keys[i+1].meta.ActivatesAt) {
		at := keys[i+1].meta.ActivatesAt
		until := at.Add(r.cfg.Retention)
		if now.Before(until) {
			return StateRetired, &at, &until
		}
		return StateWithdrawn, &at, &until
	}
	return StateActive, nil, nil
}

// Sign signs c with the active key. It implements Signer.
func (r *Ring) Sign(c authn.Claims) (string, error) {
	r.mu.RLock()
	keys := r.keys
	r.mu.RUnlock()
	now := r.now()
	for i := len(keys) - 1; i >= 0; i-- {
		if s, _, _ := r.state(keys, i, now); s == StateActive {
			return keys[i].signer.Sign(c)
		}
	}
	return "", errors.New("token: no active signing key")
}

// published answers the public keys of the next, active and retired keys.
func (r *Ring) published() []jwk.Key {
	r.mu.RLock()
	keys := r.keys
	r.mu.RUnlock()
	now := r.now()
	var out []jwk.Key
	for i := range keys {
		if s, _, _ := r.state(keys, i, now); s != StateWithdrawn {
			out = append(out, keys[i].signer.PublicKey())
		}
	}
	return out
}

// PublicSet is the JWKS: the public keys of the next, active and retired keys.
func (r *Ring) PublicSet() jwk.Set {
	set := jwk.NewSet()
	for _, k := range r.published() {
		// Keys have distinct ids, so adding cannot fail.
		_ = set.AddKey(k)
	}
	return set
}

// LookupKeyID finds a published key; it lets the service verify its own tokens.
func (r *Ring) LookupKeyID(kid string) (jwk.Key, bool) {
	for _, k := range r.published() {
		if k.KeyID() == kid {
			return k, true
		}
	}
	return nil, false
}

// Algorithms are the algorithms of the published keys, sorted.
func (r *Ring) Algorithms() []string {
	var algs []string
	for _, k := range r.published() {
		if a := k.Algorithm().String(); !slices.Contains(algs, a) {
			algs = append(algs, a)
		}
	}
	slices.Sort(algs)
	return algs
}

// List describes every key held, oldest activation first.
func (r *Ring) List() []KeyInfo {
	r.mu.RLock()
	keys := r.keys
	r.mu.RUnlock()
	now := r.now()
	out := make([]KeyInfo, len(keys))
	for i, k := range keys {
		state, retired, withdrawn := r.state(keys, i, now)
		out[i] = KeyInfo{ID: k.meta.ID, Alg: k.meta.Alg, State: state, CreatedAt: k.meta.CreatedAt,
			ActivatesAt: k.meta.ActivatesAt, RetiredAt: retired, WithdrawnAt: withdrawn}
	}
	return out
}
