// Package crypt seals small secrets at rest (identity's MFA TOTP secrets, agent-team's model
// connection keys and MCP authentication headers) with AES-256-GCM under a key from the
// environment. A sealed value is nonce || ciphertext; the caller's associated data (the
// owning row's id) binds it to its row, so a ciphertext copied to another row does not open.
package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// KeySize is the AES-256 key length.
const KeySize = 32

// ErrOpen reports a sealed value that does not open under the key (tampered, truncated or
// sealed under another key or for another row).
var ErrOpen = errors.New("crypt: cannot open sealed value")

// Box seals and opens values.
type Box struct{ aead cipher.AEAD }

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("crypt: key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("crypt: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("crypt: %w", err)
	}
	return &Box{aead: aead}, nil
}

// ParseKey decodes a base64 (standard or URL alphabet, padded or not) 32-byte key.
func ParseKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("crypt: ENCRYPTION_KEY must be %d bytes in base64", KeySize)
}

// DeriveKey derives a 32-byte encryption key from an Ed25519 signing key with HKDF-SHA256 and
// a purpose label, for deployments that set no ENCRYPTION_KEY.
func DeriveKey(signing ed25519.PrivateKey, purpose string) ([]byte, error) {
	k, err := hkdf.Key(sha256.New, signing.Seed(), nil, purpose, KeySize)
	if err != nil {
		return nil, fmt.Errorf("crypt: derive key: %w", err)
	}
	return k, nil
}

// Seal encrypts plain bound to aad.
func (b *Box) Seal(plain, aad []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("crypt: nonce: %w", err)
	}
	return b.aead.Seal(nonce, nonce, plain, aad), nil
}

// Open decrypts a value sealed with aad; it returns ErrOpen when it does not authenticate.
func (b *Box) Open(sealed, aad []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], aad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
