// Package redisx connects services to Redis and limits request rates with GCRA
// (go-redis/redis_rate). Connection problems are reported as apperr Unavailable, malformed
// settings as Invalid and exhausted limits as RateLimited with a retry delay.
package redisx

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/motionstudio/platform/pkg/apperr"
)

// connectTimeout bounds the first ping so a service fails fast at start when Redis is absent.
const connectTimeout = 5 * time.Second

// Config locates Redis. KeyPrefix namespaces every key a service writes, so several
// deployments can share one Redis.
type Config struct {
	// URL is the Redis server and database index.
	URL string `env:"REDIS_URL" default:"redis://127.0.0.1:6379/0"`
	// KeyPrefix is prepended to every key the service writes (tests and shared servers).
	KeyPrefix string `env:"REDIS_KEY_PREFIX"`
}

// Connect parses cfg.URL, opens a client that traces its commands (see tracingHook) and pings
// it. It returns Invalid for a malformed URL
// and Unavailable when Redis does not answer; the client is closed in both cases.
func Connect(ctx context.Context, cfg Config) (*redis.Client, error) {
	opts, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, apperr.Wrap(fmt.Errorf("redisx: parse url: %w", err), apperr.Invalid, "", "invalid redis url")
	}
	c := redis.NewClient(opts)
	c.AddHook(newTracingHook(opts))
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if err := Ping(ctx, c); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// Ping checks that Redis answers. It returns Unavailable when it does not.
func Ping(ctx context.Context, c *redis.Client) error {
	if err := c.Ping(ctx).Err(); err != nil {
		return apperr.Wrap(fmt.Errorf("redisx: ping %s: %w", c.Options().Addr, err), apperr.Unavailable, "redis_unavailable", "redis is unavailable")
	}
	return nil
}
