// Package config is the agent-team service's configuration, read from the environment.
package config

import (
	"github.com/motionstudio/platform/pkg/config"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/pgdb"
)

// Config holds every setting of agentteam-svc.
type Config struct {
	HTTP httpx.Config
	DB   pgdb.Config
	NATS natsx.Config
	Auth Auth
	// LogLevel is debug, info, warn or error.
	LogLevel string `env:"LOG_LEVEL" default:"info"`
	// SkillsAdminKey guards the shared skill library (X-Skills-Admin-Key); empty refuses every call.
	SkillsAdminKey string `env:"SKILLS_ADMIN_KEY"`
}

// Auth says where the identity service's public keys are.
type Auth struct {
	// JWKSURL is identity-svc's key set, fetched lazily and cached.
	JWKSURL string `env:"JWKS_URL" default:"http://127.0.0.1:8081/.well-known/jwks.json"`
	// Issuer is the iss every accepted token must carry.
	Issuer string `env:"JWT_ISSUER" default:"motionstudio-identity"`
}

// Load reads the environment and fills local-development defaults.
func Load() (Config, error) {
	var c Config
	if err := config.Load(&c); err != nil {
		return c, err
	}
	if c.HTTP.Addr == "" {
		c.HTTP.Addr = "127.0.0.1:8083"
	}
	if c.DB.DSN == "" {
		c.DB.DSN = "postgres://postgres@127.0.0.1:5432/agentteam?sslmode=disable"
	}
	return c, nil
}
