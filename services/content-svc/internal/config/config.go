// Package config is the content service's configuration, read from the environment.
package config

import (
	"github.com/motionstudio/platform/pkg/blob"
	"github.com/motionstudio/platform/pkg/config"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/pgdb"
)

// Config holds every setting of content-svc.
type Config struct {
	HTTP     httpx.Config
	DB       pgdb.Config
	NATS     natsx.Config
	Blob     blob.Config
	Auth     Auth
	LogLevel string `env:"LOG_LEVEL" default:"info"`
}

// Auth says where the identity service's public keys are.
type Auth struct {
	JWKSURL string `env:"JWKS_URL" default:"http://127.0.0.1:8081/.well-known/jwks.json"`
	Issuer  string `env:"JWT_ISSUER" default:"motionstudio-identity"`
}

// Load reads the environment and fills local-development defaults.
func Load() (Config, error) {
	var c Config
	if err := config.Load(&c); err != nil {
		return c, err
	}
	if c.HTTP.Addr == "" {
		c.HTTP.Addr = "127.0.0.1:8082"
	}
	if c.DB.DSN == "" {
		c.DB.DSN = "postgres://postgres@127.0.0.1:5432/content?sslmode=disable"
	}
	if c.Blob.Bucket == "" {
		c.Blob.Bucket = "content"
	}
	return c, nil
}
