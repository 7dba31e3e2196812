package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"math/big"
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

// ValidPrefix reports whether prefix has a key prefix's form: a brand (1-16 lower-case letters
// and digits, starting with a letter), "_live_" or "_test_", and 8 letters or digits. It is on
// every validation's path, so it is written out rather than a regular expression.
func ValidPrefix(prefix string) bool {
	brand, rest, ok := strings.Cut(prefix, "_")
	if !ok || !validBrand(brand) {
		return false
	}
	env, random, ok := strings.Cut(rest, "_")
	if !ok || (env != "live" && env != "test") || len(random) != PrefixRandomLen {
		return false
	}
	for i := range len(random) {
		if c := random[i]; !isLower(c) && !isDigit(c) && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// ValidHash reports whether hash is a lower-case hex SHA-256.
func ValidHash(hash string) bool {
	if len(hash) != 64 {
		return false
	}
	for i := range len(hash) {
		if c := hash[i]; !isDigit(c) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// validBrand reports whether brand is 1-16 lower-case letters and digits, starting with a letter.
func validBrand(brand string) bool {
	if len(brand) == 0 || len(brand) > 16 || !isLower(brand[0]) {
		return false
	}
	for i := 1; i < len(brand); i++ {
		if !isLower(brand[i]) && !isDigit(brand[i]) {
			return false
		}
	}
	return true
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Minted is a new secret and the parts of it that are stored.
type Minted struct {
	Secret, Prefix, Last4, Hash string
}

// ValidBrand reports an error when brand cannot start a key: 1-16 lower-case letters and
// digits, starting with a letter (it must not contain the "_" that separates the parts).
func ValidBrand(brand string) error {
	if !validBrand(brand) {
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
