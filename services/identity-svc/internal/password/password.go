// Package password hashes and verifies passwords with argon2id (RFC 9106) in the PHC string
// format, so that parameters can change and old hashes are re-hashed on the next login. A
// Hasher runs at most one hash per core at a time and refuses work it could not start soon
// (apperr Unavailable with Retry-After) instead of letting a queue grow for seconds.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/motionstudio/platform/pkg/apperr"
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

// QueuePerCore is how many hashes may wait for a core, per core, before more are refused: at
// about 40 ms a hash, a waiting one starts within some 100 ms.
const QueuePerCore = 2

// RetryAfter is the Retry-After of a refused hash.
const RetryAfter = time.Second

// Hasher hashes with fixed parameters, at most one hash per core at a time.
type Hasher struct {
	p        Params
	slots    chan struct{}
	admitted atomic.Int64
	max      int64
}

// NewHasher returns a Hasher using p that runs GOMAXPROCS hashes at once and lets
// QueuePerCore more per core wait.
func NewHasher(p Params) *Hasher {
	cores := runtime.GOMAXPROCS(0)
	return &Hasher{p: p, slots: make(chan struct{}, cores), max: int64(cores * (1 + QueuePerCore))}
}

// enter takes a core for one hash, waiting behind at most the queue; it returns apperr
// Unavailable at once when the queue is full.
func (h *Hasher) enter() error {
	if h.admitted.Add(1) > h.max {
		h.admitted.Add(-1)
		return errBusy()
	}
	h.slots <- struct{}{}
	return nil
}

func errBusy() error {
	e := apperr.E(apperr.Unavailable, "busy", "Too many passwords are being checked right now; retry shortly.")
	e.RetryAfter = RetryAfter
	return e
}

// Ready returns the apperr Unavailable that Hash and Verify return when the queue is full now,
// so that a login can be refused before the lookups and rate-limit checks that lead up to its
// hash, whose cores the hashes need. It reserves nothing: a hash asked for later may still be
// refused.
func (h *Hasher) Ready() error {
	if h.admitted.Load() >= h.max {
		return errBusy()
	}
	return nil
}

func (h *Hasher) leave() {
	<-h.slots
	h.admitted.Add(-1)
}

// Hash returns the PHC string of plain with a fresh random salt. It returns apperr
// Unavailable when every core is busy and the queue is full.
func (h *Hasher) Hash(plain string) (string, error) {
	if err := h.enter(); err != nil {
		return "", err
	}
	defer h.leave()
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
// ErrMalformedHash for a hash it cannot read and apperr Unavailable when every core is busy and
// the queue is full.
func (h *Hasher) Verify(plain, encoded string) (match, rehash bool, err error) {
	p, salt, key, err := decode(encoded)
	if err != nil {
		return false, false, err
	}
	if err := h.enter(); err != nil {
		return false, false, err
	}
	defer h.leave()
	got := argon2.IDKey([]byte(plain), salt, p.Iterations, p.MemoryKiB, p.Parallelism, uint32(len(key))) // #nosec G115 -- key is a decoded stored hash of a few dozen bytes
	match = subtle.ConstantTimeCompare(got, key) == 1
	rehash = p.MemoryKiB != h.p.MemoryKiB || p.Iterations != h.p.Iterations ||
		p.Parallelism != h.p.Parallelism || uint32(len(key)) != h.p.KeyLen || uint32(len(salt)) != h.p.SaltLen // #nosec G115 -- key and salt are decoded from a stored hash of a few dozen bytes
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
