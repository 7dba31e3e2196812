// Package password hashes and verifies passwords with argon2id (RFC 9106) in the PHC string
// format, so that parameters can change and old hashes are re-hashed on the next login.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id cost parameters.
type Params struct {
	MemoryKiB   uint32
	Iterations  uint32
	Parallelism uint8
	SaltLen     uint32
	KeyLen      uint32
}

// Default follows the OWASP recommendation: m=19 MiB, t=2, p=1.
var Default = Params{MemoryKiB: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLen: 16, KeyLen: 32}

// ErrMalformedHash reports a stored hash that is not an argon2id PHC string.
var ErrMalformedHash = errors.New("password: malformed hash")

// Hasher hashes with fixed parameters.
type Hasher struct{ p Params }

// NewHasher returns a Hasher using p.
func NewHasher(p Params) *Hasher { return &Hasher{p: p} }

// Hash returns the PHC string of plain with a fresh random salt.
func (h *Hasher) Hash(plain string) (string, error) {
	salt := make([]byte, h.p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password: salt: %w", err)
	}
	key := argon2.IDKey([]byte(plain), salt, h.p.Iterations, h.p.MemoryKiB, h.p.Parallelism, h.p.KeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version,
		h.p.MemoryKiB, h.p.Iterations, h.p.Parallelism, enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// Verify reports whether plain matches the stored hash (in constant time) and whether the hash
// should be replaced because its parameters differ from the hasher's. It returns
// ErrMalformedHash for a hash it cannot read.
func (h *Hasher) Verify(plain, encoded string) (match, rehash bool, err error) {
	p, salt, key, err := decode(encoded)
	if err != nil {
		return false, false, err
	}
	got := argon2.IDKey([]byte(plain), salt, p.Iterations, p.MemoryKiB, p.Parallelism, uint32(len(key)))
	match = subtle.ConstantTimeCompare(got, key) == 1
	rehash = p.MemoryKiB != h.p.MemoryKiB || p.Iterations != h.p.Iterations ||
		p.Parallelism != h.p.Parallelism || uint32(len(key)) != h.p.KeyLen || uint32(len(salt)) != h.p.SaltLen
	return match, rehash, nil
}

func decode(encoded string) (Params, []byte, []byte, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return Params{}, nil, nil, ErrMalformedHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return Params{}, nil, nil, ErrMalformedHash
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Iterations, &p.Parallelism); err != nil {
		return Params{}, nil, nil, ErrMalformedHash
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return Params{}, nil, nil, ErrMalformedHash
	}
	key, err := enc.DecodeString(parts[5])
	if err != nil || len(key) == 0 {
		return Params{}, nil, nil, ErrMalformedHash
	}
	return p, salt, key, nil
}
