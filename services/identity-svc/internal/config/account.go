package config

import "time"

// Account holds the settings of tenants, API keys and webhooks.
type Account struct {
	// OutboundAllowLoopback lets webhook deliveries and domain checks reach loopback addresses;
	// only local development and tests set it.
	OutboundAllowLoopback bool `env:"OUTBOUND_ALLOW_LOOPBACK" default:"false"`
	// OutboundDNSServer ("host:port") resolves the hosts of webhook URLs instead of the system
	// resolver; a resolver that knows no cluster-internal names keeps them from resolving at all.
	OutboundDNSServer string `env:"OUTBOUND_DNS_SERVER"`

	// DomainChallengeTTL is how long a custom-domain challenge stays valid.
	DomainChallengeTTL time.Duration `env:"DOMAIN_CHALLENGE_TTL" default:"72h"`
	// DomainCheckInterval is how often pending domain challenges are checked.
	DomainCheckInterval time.Duration `env:"DOMAIN_CHECK_INTERVAL" default:"1m"`
	// DomainDNSServer ("host:port") answers challenge TXT lookups instead of the system resolver.
	DomainDNSServer string `env:"DOMAIN_DNS_SERVER"`
	// DomainCheckHTTPAddr ("host:port") is connected to for HTTP_FILE challenges instead of the
	// domain itself (local development and tests).
	DomainCheckHTTPAddr string `env:"DOMAIN_CHECK_HTTP_ADDR"`

	APIKeys  APIKeys
	Webhooks Webhooks
}

// APIKeys holds the settings of tenant API keys.
type APIKeys struct {
	// Brand starts every secret: <brand>_live_... or <brand>_test_....
	Brand string `env:"API_KEY_BRAND" default:"ms"`
	// CacheTTL is how long a validated key is served from memory; revocations drop it at once.
	CacheTTL time.Duration `env:"API_KEY_CACHE_TTL" default:"60s"`
	// CacheKeys bounds how many keys (and unknown hashes) each process keeps in memory for
	// validation (internal/cache Keys), least recently used out first. Zero keeps none: every
	// validation reads the database.
	CacheKeys int `env:"API_KEY_CACHE_KEYS" default:"100000"`
	// UsageFlushInterval is how often counted key use is written to the database.
	UsageFlushInterval time.Duration `env:"API_KEY_USAGE_FLUSH_INTERVAL" default:"5s"`
}

// Webhooks holds the settings of webhook delivery.
type Webhooks struct {
	// RetrySchedule lists the delays before each retry, comma separated.
	RetrySchedule string `env:"WEBHOOK_RETRY_SCHEDULE" default:"5s,5m,30m,2h,5h,10h,10h"`
	// Timeout bounds one delivery request.
	Timeout time.Duration `env:"WEBHOOK_TIMEOUT" default:"10s"`
	// SweepInterval is how often due retries and lost wake-ups are queued.
	SweepInterval time.Duration `env:"WEBHOOK_SWEEP_INTERVAL" default:"1s"`
	// Concurrency is how many deliveries one process runs at once.
	Concurrency int `env:"WEBHOOK_CONCURRENCY" default:"8"`
}
