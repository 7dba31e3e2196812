package redissession

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// sealKey derives the key that seals a token's successor from the token itself, so only a
// holder of the old token can read the successor back: Redis alone holds no usable token.
func sealKey(old string) (cipher.AEAD, error) {
	key := sha256.Sum256([]byte("motionstudio refresh successor\x00" + old))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, fmt.Errorf("session: seal key: %w", err)
	}
	return cipher.NewGCM(block)
}

// seal encrypts next under old. Each key seals exactly one successor (a token is rotated
// once), so a fixed nonce is never reused under the same key.
func seal(old, next string) (string, error) {
	aead, err := sealKey(old)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	sealed := aead.Seal(nil, nonce, []byte(next), nil) // #nosec G407 -- each key, derived from a single-use refresh token, seals exactly one message
	return base64.RawStdEncoding.EncodeToString(sealed), nil
}

// unseal reverses seal.
func unseal(old, sealed string) (string, error) {
	aead, err := sealKey(old)
	if err != nil {
		return "", err
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	if err != nil {
		return "", fmt.Errorf("session: unseal successor: %w", err)
	}
	next, err := aead.Open(nil, make([]byte, aead.NonceSize()), raw, nil)
	if err != nil {
		return "", fmt.Errorf("session: unseal successor: %w", err)
	}
	return string(next), nil
}
