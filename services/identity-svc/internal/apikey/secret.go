package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"math/big"
	"regexp"
	"strings"
)

// Secret layout: <brand>_<live|test>_<32 random base62 characters><6 checksum characters>.
// The random part carries about 190 bits; the checksum is the CRC-32 (IEEE) of everything
// before it, in base62, so a mistyped or truncated key is refused without a lookup.
const (
	randomLen   = 32
	checksumLen = 6
	// PrefixRandomLen is how many random characters the displayed key_prefix keeps.
	PrefixRandomLen = 8
	base62          = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// Environments of a key.
const (
	EnvLive = "Live"
	EnvTest = "Test"
)

var (
	brandPattern  = regexp.MustCompile(`^[a-z][a-z0-9]{0,15}$`)
	prefixPattern = regexp.MustCompile(`^[a-z][a-z0-9]{0,15}_(live|test)_[0-9A-Za-z]{8}$`)
	hashPattern   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Minted is a new secret and the parts of it that are stored.
type Minted struct {
	Secret, Prefix, Last4, Hash string
}

// ValidBrand reports an error when brand cannot start a key: 1-16 lower-case letters and
// digits, starting with a letter (it must not contain the "_" that separates the parts).
func ValidBrand(brand string) error {
	if !brandPattern.MatchString(brand) {
		return fmt.Errorf("apikey: brand %q must be 1-16 lower-case letters and digits, starting with a letter", brand)
	}
	return nil
}

// Mint makes a new secret for brand and environment (EnvLive or EnvTest).
func Mint(brand, env string) (Minted, error) {
	head := brand + "_" + strings.ToLower(env) + "_"
	random, err := randomBase62(randomLen)
	if err != nil {
		return Minted{}, err
	}
	secret := head + random + checksum(head+random)
	return Minted{Secret: secret, Prefix: head + random[:PrefixRandomLen], Last4: secret[len(secret)-4:], Hash: Hash(secret)}, nil
}

// Hash is the stored and validated form of a secret: the hex SHA-256 of the whole secret.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// WellFormed reports whether secret has the layout of a key of brand and a correct checksum.
// The gateway calls it (or its equivalent) before hashing, so garbage never costs a lookup.
func WellFormed(brand, secret string) bool {
	for _, env := range []string{"_live_", "_test_"} {
		head := brand + env
		body, ok := strings.CutPrefix(secret, head)
		if !ok || len(body) != randomLen+checksumLen || strings.Trim(body, base62) != "" {
			continue
		}
		return checksum(head+body[:randomLen]) == body[randomLen:]
	}
	return false
}

// PrefixOf returns the key_prefix of a secret (the brand, the environment and the first
// random characters), or "" when it is not well formed for brand.
func PrefixOf(brand, secret string) string {
	if !WellFormed(brand, secret) {
		return ""
	}
	return secret[:len(brand)+len("_live_")+PrefixRandomLen]
}

func checksum(s string) string {
	n := big.NewInt(int64(crc32.ChecksumIEEE([]byte(s))))
	out := make([]byte, checksumLen)
	base := big.NewInt(62)
	mod := new(big.Int)
	for i := checksumLen - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = base62[mod.Int64()]
	}
	return string(out)
}

func randomBase62(n int) (string, error) {
	out := make([]byte, n)
	max := big.NewInt(62)
	for i := range out {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		out[i] = base62[v.Int64()]
	}
	return string(out), nil
}
