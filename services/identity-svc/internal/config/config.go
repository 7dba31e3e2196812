// Package config is the identity service's configuration, read from the environment.
package config

import (
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
	// Issuer is the iss of every token the service signs.
	Issuer string `env:"JWT_ISSUER" default:"motionstudio-identity"`

	// SigningKey is the Ed25519 signing key as a base64 32-byte seed.
	SigningKey string `env:"SIGNING_KEY"`
	// SigningKeyFile holds the key as PEM PKCS#8 or a base64 seed; when neither is set the service
	// uses $XDG_STATE_HOME/motionstudio/identity-signing.pem.
	SigningKeyFile string `env:"SIGNING_KEY_FILE"`
	// GenerateSigningKey creates the key file when it does not exist (local development only).
	GenerateSigningKey bool `env:"SIGNING_KEY_GENERATE" default:"true"`

	// AccessTokenTTL is the lifetime of user access tokens.
	AccessTokenTTL time.Duration `env:"ACCESS_TOKEN_TTL" default:"15m"`
	// ServiceTokenTTL is the lifetime of service tokens from the client-credentials grant.
	ServiceTokenTTL time.Duration `env:"SERVICE_TOKEN_TTL" default:"15m"`
	// ServiceClients lists the OAuth clients of the client-credentials grant as "id:secret,...".
	ServiceClients string `env:"SERVICE_CLIENTS"`
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
