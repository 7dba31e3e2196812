// Package config is the agent-team service's configuration, read from the environment.
package config

import (
	"time"

	"github.com/motionstudio/platform/pkg/authn"
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
	Auth authn.Remote
	// Embeddings chooses the embedder of team memory and the skill library.
	Embeddings Embeddings
	// MemoryIndex bounds the in-memory vectors of team memory.
	MemoryIndex MemoryIndex
	Runs        Runs
	// EncryptionKeys is the encryption key ring: comma-separated id:base64key entries (ids of 1
	// to 32 letters, digits, '.', '_' or '-'; keys of 32 bytes), for example
	// "2026-11:<key>,default:<old key>". The first key seals model connection keys and MCP
	// server headers with AES-256-GCM, every key opens; values sealed under a single
	// ENCRYPTION_KEY open under the id "default". `agentteam-svc admin reseal` moves every value
	// under the first key, after which the others can be removed.
	EncryptionKeys string `env:"ENCRYPTION_KEYS"`
	// EncryptionKey (base64, 32 bytes) is the key with the id "default", after the keys of
	// ENCRYPTION_KEYS when those are set too. When neither it nor ENCRYPTION_KEYS is set, a fixed
	// development key is used and a warning is logged; deployments set their own.
	EncryptionKey string `env:"ENCRYPTION_KEY"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `env:"LOG_LEVEL" default:"info"`
	// SkillsAdminKey guards the shared skill library (X-Skills-Admin-Key); empty refuses every call.
	SkillsAdminKey string `env:"SKILLS_ADMIN_KEY"`
	// OutboundAllowLoopback lets calls to user-given URLs (model connections, MCP servers,
	// embeddings) reach 127.0.0.1 and ::1; only local development and tests set it.
	OutboundAllowLoopback bool `env:"OUTBOUND_ALLOW_LOOPBACK" default:"false"`
	// OutboundDNSServer ("host:port") resolves the hosts of model connections and MCP servers
	// instead of the system resolver; a resolver that knows no cluster-internal names keeps them
	// from resolving at all.
	OutboundDNSServer string `env:"OUTBOUND_DNS_SERVER"`
	// SkillSource is the shared skill library's source and push-hook settings.
	SkillSource SkillSource
	// MembershipCacheEntries bounds each of the two maps of membership facts every process
	// keeps in memory (internal/cache: members' roles per organization, teams' organization and
	// board version), least recently used out first; a change on any replica drops its entries
	// everywhere (LISTEN/NOTIFY). Zero keeps none: every access check and board read asks the
	// database.
	MembershipCacheEntries int `env:"MEMBERSHIP_CACHE_ENTRIES" default:"50000"`
	// LibraryCachePages bounds the pages of skill, agent-profile and product-profile lists every
	// process keeps in memory (internal/cache: the items of one page of one organization's list,
	// up to 100, without bodies), least recently used out first; a change of the library on any
	// replica drops the pages it shows in (LISTEN/NOTIFY). Zero keeps none: every list asks the
	// database.
	LibraryCachePages int `env:"LIBRARY_CACHE_PAGES" default:"1024"`
}

// Embeddings configures the OpenAI-compatible embeddings endpoint; with no base URL the
// built-in local embedder is used.
type Embeddings struct {
	// BaseURL is the API root of an OpenAI-compatible embeddings endpoint (for example
	// https://api.openai.com/v1); empty selects the built-in local embedder.
	BaseURL string `env:"EMBEDDINGS_BASE_URL"`
	// Model is the embeddings model; it must answer 384-dimension vectors.
	Model string `env:"EMBEDDINGS_MODEL" default:"text-embedding-3-small"`
	// APIKey is the endpoint's bearer token; it is never logged.
	APIKey string `env:"EMBEDDINGS_API_KEY"`
}

// SkillSource is where the shared skill library is read from: a local directory or a Git
// repository (at most one), synced at start-up, by POST /api/skills/sync and by push hooks.
type SkillSource struct {
	// Dir is a local directory whose SKILL.md files are the shared library.
	Dir string `env:"SKILLS_SOURCE_DIR"`
	// GitURL is a Git repository (any URL go-git clones, a local path included) whose SKILL.md
	// files are the shared library.
	GitURL string `env:"SKILLS_SOURCE_GIT_URL"`
	// GitBranch is the branch to read; empty reads the repository's default branch.
	GitBranch string `env:"SKILLS_SOURCE_GIT_BRANCH"`
	// GitCache is where the repository is cloned; empty uses a fresh temporary directory.
	GitCache string `env:"SKILLS_SOURCE_GIT_CACHE"`
	// WebhookSecret verifies push hooks (GitHub-style HMAC or GitLab-style token); empty accepts
	// every hook.
	WebhookSecret string `env:"SKILLS_WEBHOOK_SECRET"`
	// SyncDebounce is how long a push hook waits for more pushes before it re-syncs.
	SyncDebounce time.Duration `env:"SKILLS_SYNC_DEBOUNCE" default:"2s"`
}

// Runs configures the agent-run worker, its model calls and its MCP calls.
type Runs struct {
	// WorkerConcurrency is how many runs one process executes at once; 0 turns the worker and
	// its sweeper off in this process (an API-only replica).
	WorkerConcurrency int `env:"RUN_WORKER_CONCURRENCY" default:"4" min:"0"`
	// OrgConcurrency is how many runs of one organization may be Running at once, across all
	// replicas: a run over it stays Queued (no attempt counted) until one of the organization's
	// runs ends, so one organization's slow or hostile model endpoint cannot hold the shared
	// workers. Keep it below RUN_WORKER_CONCURRENCY times the worker replicas.
	OrgConcurrency int `env:"RUN_ORG_CONCURRENCY" default:"2" min:"1"`
	// EventStreams bounds the open GET /runs/{id}/events streams of one process; one more is
	// answered 503 with Retry-After. A stream holds a connection and a goroutine, and reads the
	// database only when its run changes.
	EventStreams int `env:"RUN_EVENT_STREAMS" default:"500" min:"1"`
	// Lease is how long a worker holds a claimed run without renewing it; it renews every third
	// of it while the model answers, and a run whose worker died is retried once it lapses.
	Lease time.Duration `env:"RUN_LEASE" default:"60s" min:"1s"`
	// MaxAttempts bounds the claims of one run (a worker that died mid-run counts one); the
	// run then fails with errorCode attempts_exhausted.
	MaxAttempts int `env:"RUN_MAX_ATTEMPTS" default:"3" min:"1"`
	// QueuedLimit is how long a run may wait Queued; a later claim or sweep fails it with
	// errorCode queue_timeout.
	QueuedLimit time.Duration `env:"RUN_QUEUED_LIMIT" default:"1h"`
	// SweepInterval is how often the sweeper requeues runs whose lease lapsed, re-wakes runs
	// whose wake-up was lost and fails runs queued too long.
	SweepInterval time.Duration `env:"RUN_SWEEP_INTERVAL" default:"15s"`
	// StaleAfter is how long a Pending job may sit untouched before the sweeper wakes it again.
	StaleAfter time.Duration `env:"RUN_STALE_AFTER" default:"2m"`
	// ModelTimeout bounds one chat-completions request, body included.
	ModelTimeout time.Duration `env:"MODEL_TIMEOUT" default:"120s"`
	// ModelRetries is how many times a transient model failure (5xx, 429, timeout, connection
	// error) is retried on the same connection before the fallback is tried.
	ModelRetries int `env:"MODEL_RETRIES" default:"2"`
	// ModelRetryBase is the first retry's backoff; each retry doubles it, with full jitter.
	ModelRetryBase time.Duration `env:"MODEL_RETRY_BASE" default:"500ms"`
	// ModelRetryMax caps one retry's backoff.
	ModelRetryMax time.Duration `env:"MODEL_RETRY_MAX" default:"8s"`
	// MCPTimeout bounds one MCP server's session (connect, list tools) during a run or a test.
	MCPTimeout time.Duration `env:"MCP_TIMEOUT" default:"10s"`
	// MCPMaxBodyBytes caps one MCP response (or server-sent event).
	MCPMaxBodyBytes int64 `env:"MCP_MAX_BODY_BYTES" default:"1048576"`
	// MaxSteps is how many model calls one run makes at most: each answer with tool calls
	// costs one more; a run that needs more fails with errorCode step_limit.
	MaxSteps int `env:"RUN_MAX_STEPS" default:"20" min:"1"`
	// MaxToolCalls is how many tool calls one run makes at most; the next one fails the run
	// with errorCode tool_call_limit.
	MaxToolCalls int `env:"RUN_MAX_TOOL_CALLS" default:"40" min:"0"`
	// MaxDuration is the wall time one attempt of a run may take, model and tool calls
	// included; a run that takes longer fails with errorCode time_limit.
	MaxDuration time.Duration `env:"RUN_MAX_DURATION" default:"10m" min:"1s"`
	// MaxTokens bounds the prompt and completion tokens of one run (every model call
	// summed); once reached, the run fails with errorCode token_limit instead of asking the
	// model again. The agent's monthly budget applies as well.
	MaxTokens int `env:"RUN_MAX_TOKENS" default:"200000" min:"1"`
	// ToolResultMaxBytes caps one tool result as the model reads it; a longer one is cut with
	// a marker saying how long it was.
	ToolResultMaxBytes int `env:"TOOL_RESULT_MAX_BYTES" default:"16384" min:"256"`
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

// MemoryIndex bounds the team-memory vectors each replica holds in memory (1.5 KiB each).
type MemoryIndex struct {
	// MaxTeams is how many teams' vectors are held, least recently searched evicted first.
	MaxTeams int `env:"MEMORY_INDEX_MAX_TEAMS" default:"500"`
	// MaxEntries is how many vectors are held across teams; a larger team is ranked from the
	// database on each search instead.
	MaxEntries int `env:"MEMORY_INDEX_MAX_ENTRIES" default:"100000"`
}
