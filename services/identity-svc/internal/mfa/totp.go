// Package mfa implements the second factors' arithmetic: RFC 6238 TOTP codes (SHA-1, 6 digits,
// 30-second steps), otpauth:// provisioning URLs and recovery codes. It does no I/O; the auth
// package decides which time steps were used.
package mfa

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1" // #nosec G505 -- TOTP (RFC 6238) as authenticator apps compute it is HMAC-SHA1
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// TOTP parameters (RFC 6238 defaults that every authenticator app supports).
const (
	Period    = 30 * time.Second
	Digits    = 6
	Skew      = 1
	SecretLen = 20
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewSecret returns a random 160-bit TOTP secret.
func NewSecret() []byte {
	s := make([]byte, SecretLen)
	_, _ = rand.Read(s)
	return s
}

// EncodeSecret is the base32 form authenticator apps accept.
func EncodeSecret(secret []byte) string { return b32.EncodeToString(secret) }

// Step is the TOTP time step of t.
func Step(t time.Time) int64 { return t.Unix() / int64(Period/time.Second) }

// Code is the TOTP code of secret at step (RFC 4226 dynamic truncation).
func Code(secret []byte, step int64) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(step)) // #nosec G115 -- the step counts 30-second intervals since 1970, never negative
	mac := hmac.New(sha1.New, secret)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%0*d", Digits, v%1_000_000)
}

// Match returns the step within Skew of now whose code is code, comparing in constant time,
// and false when none matches.
func Match(secret []byte, code string, now time.Time) (int64, bool) {
	if len(code) != Digits {
		return 0, false
	}
	cur := Step(now)
	var found int64
	ok := 0
	for d := int64(-Skew); d <= Skew; d++ {
		if subtle.ConstantTimeCompare([]byte(Code(secret, cur+d)), []byte(code)) == 1 {
			found, ok = cur+d, 1
		}
	}
	return found, ok == 1
}

// URL is the otpauth:// provisioning URL that QR codes carry.
func URL(issuer, account string, secret []byte) string {
	label := url.PathEscape(issuer) + ":" + url.PathEscape(account)
	q := url.Values{
		"secret": {EncodeSecret(secret)}, "issuer": {issuer}, "algorithm": {"SHA1"},
		"digits": {fmt.Sprint(Digits)}, "period": {fmt.Sprint(int(Period / time.Second))},
	}
	return "otpauth://totp/" + label + "?" + q.Encode()
}

// RecoveryCodes returns n single-use recovery codes of the form "xxxxx-xxxxx" (50 random bits
// each, lower-case base32).
func RecoveryCodes(n int) []string {
	out := make([]string, n)
	for i := range out {
		b := make([]byte, 7)
		_, _ = rand.Read(b)
		s := strings.ToLower(b32.EncodeToString(b))[:10]
		out[i] = s[:5] + "-" + s[5:]
	}
	return out
}

// NormalizeRecoveryCode lower-cases a typed recovery code and drops spaces and dashes.
func NormalizeRecoveryCode(code string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(code)))
}
