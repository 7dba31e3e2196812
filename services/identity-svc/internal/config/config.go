// Package config is the identity service's configuration, read from the environment.
package config

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/motionstudio/platform/pkg/config"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/redisx"
)

// Config holds every setting of identity-svc.
type Config struct {
	HTTP  httpx.Config
	DB    pgdb.Config
	Redis redisx.Config
	NATS  natsx.Config

	// LogLevel is debug, info, warn or error.
	LogLevel string `env:"LOG_LEVEL" default:"info"`
	// Issuer is the iss of every token the service signs and the issuer of its OpenID
	// discovery document: the service's public base URL (behind a gateway, the gateway's).
	Issuer string `env:"JWT_ISSUER" default:"http://127.0.0.1:8081"`
	// Audience is the aud of user access tokens, and the default one of service tokens.
	Audience string `env:"JWT_AUDIENCE" default:"motionstudio"`

	// SigningKey is the Ed25519 signing key as a base64 32-byte seed: the first key of the
	// signing_keys table when it is empty (later keys come from rotations).
	SigningKey string `env:"SIGNING_KEY"`
	// SigningKeyFile holds the key as PEM PKCS#8 or a base64 seed; when neither is set the service
	// uses $XDG_STATE_HOME/motionstudio/identity-signing.pem.
	SigningKeyFile string `env:"SIGNING_KEY_FILE"`
	// GenerateSigningKey creates the key file when it does not exist (local development only).
	GenerateSigningKey bool `env:"SIGNING_KEY_GENERATE" default:"true"`
	// SigningAlg is the algorithm of new signing keys: EdDSA, ES256 or RS256.
	SigningAlg string `env:"SIGNING_ALG" default:"EdDSA"`
	// SigningKeyPrepublish is how long a rotated-in key is published in the JWKS before it
	// signs; at least the verifiers' JWKS_REFRESH_INTERVAL plus the JWKS cache lifetime (5m).
	SigningKeyPrepublish time.Duration `env:"SIGNING_KEY_PREPUBLISH" default:"15m"`
	// SigningKeyReload is how often each replica rereads the signing keys; less than
	// SIGNING_KEY_PREPUBLISH.
	SigningKeyReload time.Duration `env:"SIGNING_KEY_RELOAD" default:"30s"`
	// SigningKeyRotateEvery rotates the signing key automatically this long after the last
	// rotation; zero leaves rotation to `identity-svc admin keys rotate`.
	SigningKeyRotateEvery time.Duration `env:"SIGNING_KEY_ROTATE_EVERY" default:"0s"`

	// AccessTokenTTL is the lifetime of user access tokens.
	AccessTokenTTL time.Duration `env:"ACCESS_TOKEN_TTL" default:"15m"`
	// ServiceTokenTTL is the lifetime of service tokens from the client-credentials grant.
	ServiceTokenTTL time.Duration `env:"SERVICE_TOKEN_TTL" default:"15m"`
	// ServiceClients lists the OAuth clients of the client-credentials grant as "id:secret,...".
	ServiceClients string `env:"SERVICE_CLIENTS"`
	// ServiceClientAudiences lists the audiences each client may ask for (resource or audience
	// parameter) as "id=aud1 aud2,..."; the first is its default. A client not listed may have
	// JWT_AUDIENCE only.
	ServiceClientAudiences string `env:"SERVICE_CLIENT_AUDIENCES"`
	// TokenRateLimit is the number of token requests per minute allowed per client address.
	TokenRateLimit int `env:"TOKEN_RATE_LIMIT_PER_MIN" default:"60"`

	// BalanceCurrency is the ISO 4217 currency of user balances.
	BalanceCurrency string `env:"BALANCE_CURRENCY" default:"USD"`

	// Auth configures registration, login and sessions (internal/config/auth.go).
	Auth Auth
	// Account configures tenants, API keys and webhooks (internal/config/account.go).
	Account Account
	// Billing configures plans, payments and gateways (internal/config/billing.go).
	Billing Billing
}

// Load reads the environment and fills local-development defaults.
func Load() (Config, error) {
	var c Config
	if err := config.Load(&c); err != nil {
		return c, err
	}
	if c.HTTP.Addr == "" {
		c.HTTP.Addr = "127.0.0.1:8081"
	}
	if c.DB.DSN == "" {
		c.DB.DSN = "postgres://postgres@127.0.0.1:5432/identity?sslmode=disable"
	}
	if c.SigningKey == "" && c.SigningKeyFile == "" {
		c.SigningKeyFile = defaultKeyFile()
	}
	if c.SigningKeyReload <= 0 || c.SigningKeyReload >= c.SigningKeyPrepublish {
		return c, fmt.Errorf("config: SIGNING_KEY_RELOAD (%s) must be positive and shorter than SIGNING_KEY_PREPUBLISH (%s)",
			c.SigningKeyReload, c.SigningKeyPrepublish)
	}
	if c.Auth.ResetPoll <= 0 {
		return c, fmt.Errorf("config: PASSWORD_RESET_POLL_INTERVAL (%s) must be positive", c.Auth.ResetPoll)
	}
	if u, err := url.Parse(c.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return c, fmt.Errorf("config: JWT_ISSUER %q must be an http(s) URL without query or fragment", c.Issuer)
	}
	return c, nil
}

// defaultKeyFile is where a development signing key is generated and shared between
// `identity-svc serve` and `identity-svc admin`.
func defaultKeyFile() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "motionstudio", "identity-signing.pem")
}
