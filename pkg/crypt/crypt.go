// Package crypt seals small secrets at rest (identity's MFA TOTP secrets, webhook secrets and
// signing keys, agent-team's model connection keys and MCP authentication headers) with
// AES-256-GCM under a ring of keys from the environment. The first key of a Ring seals; every
// key opens. A sealed value is header || nonce || ciphertext, where the header ("K", version 1,
// the key id's length, the key id) names the key that sealed it; a value without the header was
// sealed before the ring existed and opens under the key with id LegacyID. The caller's
// associated data (the owning row's id) binds a value to its row, so a ciphertext copied to
// another row does not open.
package crypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the AES-256 key length.
const KeySize = 32

// LegacyID is the id of the key a single ENCRYPTION_KEY (or a derived development key) gets in
// its ring; values sealed before key ids existed carry no header and open under this key.
const LegacyID = "default"

// maxIDLen bounds a key id; ids are short labels such as "2026-11".
const maxIDLen = 32

// magic opens the header of every value a Ring seals: "K" and the format version.
var magic = []byte{'K', 1}

// ErrOpen reports a sealed value that does not open under the ring (tampered, truncated or
// sealed under another key or for another row).
var ErrOpen = errors.New("crypt: cannot open sealed value")

// ErrUnknownKey reports a value sealed under a key id the ring does not hold; it is an ErrOpen.
var ErrUnknownKey = fmt.Errorf("%w: sealed under a key id the ring does not hold", ErrOpen)

// Key is one key of a ring: the id recorded in every value it seals, and its 32 bytes.
type Key struct {
	ID     string
	Secret []byte
}

// Ring seals with its first key and opens with any of its keys.
type Ring struct {
	keys []ringKey
}

type ringKey struct {
	id   string
	aead cipher.AEAD
}

// NewRing returns a ring of one or more keys with distinct, valid ids; the first one seals.
func NewRing(keys ...Key) (*Ring, error) {
	if len(keys) == 0 {
		return nil, errors.New("crypt: a key ring needs at least one key")
	}
	r := &Ring{}
	for _, k := range keys {
		if err := validID(k.ID); err != nil {
			return nil, err
		}
		if r.key(k.ID) != nil {
			return nil, fmt.Errorf("crypt: key id %q appears twice", k.ID)
		}
		if len(k.Secret) != KeySize {
			return nil, fmt.Errorf("crypt: key %q must be %d bytes, got %d", k.ID, KeySize, len(k.Secret))
		}
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("crypt: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("crypt: %w", err)
		}
		r.keys = append(r.keys, ringKey{id: k.ID, aead: aead})
	}
	return r, nil
}

// validID accepts 1 to 32 letters, digits, '.', '_' and '-'.
func validID(id string) error {
	if id == "" || len(id) > maxIDLen || strings.IndexFunc(id, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')
	}) >= 0 {
		return fmt.Errorf("crypt: key id %q must be 1 to %d letters, digits, '.', '_' or '-'", id, maxIDLen)
	}
	return nil
}

// ParseKey decodes a base64 (standard or URL alphabet, padded or not) 32-byte key.
func ParseKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("crypt: an encryption key must be %d bytes in base64", KeySize)
}

// ParseKeys decodes ENCRYPTION_KEYS: comma-separated id:base64key entries, the sealing key
// first ("2026-11:…,default:…"). Errors name the entry's id or position, never the key.
func ParseKeys(s string) ([]Key, error) {
	var keys []Key
	for i, entry := range strings.Split(s, ",") {
		id, enc, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok {
			return nil, fmt.Errorf("crypt: ENCRYPTION_KEYS entry %d is not id:base64key", i+1)
		}
		if err := validID(id); err != nil {
			return nil, err
		}
		secret, err := ParseKey(enc)
		if err != nil {
			return nil, fmt.Errorf("crypt: ENCRYPTION_KEYS key %q must be %d bytes in base64", id, KeySize)
		}
		keys = append(keys, Key{ID: id, Secret: secret})
	}
	return keys, nil
}

// LoadRing builds a service's ring from its configuration: the keys of ENCRYPTION_KEYS (keys)
// in order, then ENCRYPTION_KEY (single), when set, as the key LegacyID; with neither,
// fallback's key (a development or derived key) as LegacyID. Rotating a single key is thus:
// put the new key in ENCRYPTION_KEYS, reseal, remove ENCRYPTION_KEY.
func LoadRing(keys, single string, fallback func() ([]byte, error)) (*Ring, error) {
	var ring []Key
	if keys != "" {
		ks, err := ParseKeys(keys)
		if err != nil {
			return nil, err
		}
		ring = ks
	}
	if single != "" {
		secret, err := ParseKey(single)
		if err != nil {
			return nil, fmt.Errorf("crypt: ENCRYPTION_KEY must be %d bytes in base64", KeySize)
		}
		ring = append(ring, Key{ID: LegacyID, Secret: secret})
	}
	if len(ring) == 0 {
		secret, err := fallback()
		if err != nil {
			return nil, err
		}
		ring = append(ring, Key{ID: LegacyID, Secret: secret})
	}
	return NewRing(ring...)
}

// DeriveKey derives a 32-byte encryption key from an Ed25519 signing key with HKDF-SHA256 and
// a purpose label, for deployments that set no encryption key.
func DeriveKey(signing ed25519.PrivateKey, purpose string) ([]byte, error) {
	k, err := hkdf.Key(sha256.New, signing.Seed(), nil, purpose, KeySize)
	if err != nil {
		return nil, fmt.Errorf("crypt: derive key: %w", err)
	}
	return k, nil
}

// SealingID is the id of the key that seals, the ring's first.
func (r *Ring) SealingID() string { return r.keys[0].id }

// Seal encrypts plain bound to aad under the ring's first key.
func (r *Ring) Seal(plain, aad []byte) ([]byte, error) {
	k := r.keys[0]
	header := append(append(bytes.Clone(magic), byte(len(k.id))), k.id...) // #nosec G115 -- ids are at most maxIDLen (32) bytes (validID)
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("crypt: nonce: %w", err)
	}
	out := make([]byte, 0, len(header)+len(nonce)+len(plain)+k.aead.Overhead())
	out = append(append(out, header...), nonce...)
	return k.aead.Seal(out, nonce, plain, aad), nil
}

// Open decrypts a value sealed with aad under any key of the ring; it returns ErrUnknownKey
// for a key id the ring does not hold and ErrOpen when the value does not authenticate.
func (r *Ring) Open(sealed, aad []byte) ([]byte, error) {
	plain, _, err := r.open(sealed, aad)
	return plain, err
}

// Reseal opens a value and, unless the ring's first key sealed it, seals it again under that
// key; resealed reports whether out is a new ciphertext.
func (r *Ring) Reseal(sealed, aad []byte) (out []byte, resealed bool, err error) {
	plain, id, err := r.open(sealed, aad)
	if err != nil {
		return nil, false, err
	}
	if id == r.SealingID() {
		return sealed, false, nil
	}
	out, err = r.Seal(plain, aad)
	return out, err == nil, err
}

// open returns the plaintext and the id named in the header of the value, or "" for a legacy
// value without one. A legacy value whose random nonce happens to begin like a header is
// still recognised: when the header's key does not authenticate it, the legacy key is tried.
func (r *Ring) open(sealed, aad []byte) ([]byte, string, error) {
	id, body, headed := splitHeader(sealed)
	if headed {
		if k := r.key(id); k != nil {
			if plain, err := k.open(body, aad); err == nil {
				return plain, id, nil
			}
		}
	}
	if legacy := r.key(LegacyID); legacy != nil {
		if plain, err := legacy.open(sealed, aad); err == nil {
			return plain, "", nil
		}
	}
	if headed && r.key(id) == nil {
		return nil, "", ErrUnknownKey
	}
	return nil, "", ErrOpen
}

// splitHeader returns the key id of a headed value and the nonce || ciphertext after it.
func splitHeader(sealed []byte) (string, []byte, bool) {
	if len(sealed) < len(magic)+1 || !bytes.HasPrefix(sealed, magic) {
		return "", nil, false
	}
	n := int(sealed[len(magic)])
	rest := sealed[len(magic)+1:]
	if n == 0 || n > maxIDLen || len(rest) < n {
		return "", nil, false
	}
	return string(rest[:n]), rest[n:], true
}

func (r *Ring) key(id string) *ringKey {
	for i := range r.keys {
		if r.keys[i].id == id {
			return &r.keys[i]
		}
	}
	return nil
}

func (k *ringKey) open(sealed, aad []byte) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(sealed) < n+k.aead.Overhead() {
		return nil, ErrOpen
	}
	plain, err := k.aead.Open(nil, sealed[:n], sealed[n:], aad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
