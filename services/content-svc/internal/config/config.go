// Package config is the content service's configuration, read from the environment.
package config

import (
	"time"

	"github.com/motionstudio/platform/pkg/authn"
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
	Auth     authn.Remote
	Uploads  Uploads
	Previews Previews
	Catalog  Catalog
	Public   Public
	// LogLevel is debug, info, warn or error.
	LogLevel string `env:"LOG_LEVEL" default:"info"`
}

// Public says which stored files anyone may read (previews, their sources, fonts, images): their
// answers carry S3_PUBLIC_BASE_URL + "/" + key.
type Public struct {
	// Prefixes are the key prefixes of the public files.
	Prefixes []string `env:"S3_PUBLIC_PREFIXES" default:"svg-previews/,fonts/,images/"`
	// SetPolicy makes the service set its bucket's policy at start-up so that anonymous clients
	// may read (only) the public prefixes; turn it off where the operator manages the bucket
	// policy or a CDN serves the files.
	SetPolicy bool `env:"S3_PUBLIC_READ_POLICY" default:"true"`
}

// Uploads bounds the AEP source-file uploads. Sizes are bytes; MB and GB are decimal.
type Uploads struct {
	// MaxSingleBytes is the largest file PUT /projects/{id}/aep accepts in one request.
	MaxSingleBytes int64 `env:"AEP_MAX_SINGLE_BYTES" default:"1073741824"`
	// MinMultipartBytes is the smallest total_size_bytes the multipart flow accepts (smaller
	// files take the single PUT).
	MinMultipartBytes int64 `env:"AEP_MULTIPART_MIN_BYTES" default:"300000000"`
	// MaxMultipartBytes is the largest total_size_bytes the multipart flow accepts.
	MaxMultipartBytes int64 `env:"AEP_MULTIPART_MAX_BYTES" default:"3000000000"`
	// PartSizeBytes is the smallest part size handed out (at least S3's 5 MiB); larger files
	// get larger parts so that no upload needs more than 1,000 parts.
	PartSizeBytes int64 `env:"AEP_PART_SIZE_BYTES" default:"67108864"`
	// URLTTL is how long presigned part URLs stay valid.
	URLTTL time.Duration `env:"AEP_PART_URL_TTL" default:"6h"`
	// MaxAge is how old an incomplete multipart upload gets before the sweeper aborts it.
	MaxAge time.Duration `env:"AEP_UPLOAD_MAX_AGE" default:"24h"`
	// DownloadTTL is how long the presigned AEP file URL in a project or upload answer works.
	DownloadTTL time.Duration `env:"AEP_DOWNLOAD_URL_TTL" default:"15m"`
	// SweepEvery is how often the sweeper looks for abandoned uploads.
	SweepEvery time.Duration `env:"AEP_UPLOAD_SWEEP_EVERY" default:"10m"`
}

// Previews configures SVG preview generation.
type Previews struct {
	// MaxImageBytes bounds the dropped image.
	MaxImageBytes int64 `env:"SVG_PREVIEW_MAX_IMAGE_BYTES" default:"10485760"`
	// MaxImagePixels bounds the dropped image's width times height, read from its header before
	// anything decodes it (a small file can declare a huge image); 16 MP is 4096×4096.
	MaxImagePixels int64 `env:"SVG_PREVIEW_MAX_IMAGE_PIXELS" default:"16777216"`
	// AIURL is the external AI service's endpoint; empty uses the built-in generator.
	AIURL string `env:"SVG_PREVIEW_AI_URL"`
	// AIToken is the bearer token sent to the external AI service.
	AIToken string `env:"SVG_PREVIEW_AI_TOKEN"`
	// AITimeout bounds one request to the external AI service.
	AITimeout time.Duration `env:"SVG_PREVIEW_AI_TIMEOUT" default:"60s"`
	// Lease is how long a worker holds a preview before another may take it over.
	Lease time.Duration `env:"SVG_PREVIEW_LEASE" default:"2m"`
	// MaxAttempts is how many generation attempts a preview gets before it is Failed.
	MaxAttempts int `env:"SVG_PREVIEW_MAX_ATTEMPTS" default:"3"`
	// StaleAfter is how long a preview may sit Generating without a live lease (a
	// dead-lettered wake-up) before the sweep queues its job again.
	StaleAfter time.Duration `env:"SVG_PREVIEW_STALE_AFTER" default:"5m"`
	// RequeueEvery is how often that sweep runs.
	RequeueEvery time.Duration `env:"SVG_PREVIEW_REQUEUE_EVERY" default:"1m"`
	// Concurrency is how many previews one process generates at once.
	Concurrency int `env:"SVG_PREVIEW_CONCURRENCY" default:"2"`
}

// Catalog tunes the template catalog's reads.
type Catalog struct {
	// IndexMaxTemplates is the largest catalog each process holds as its listing index, the
	// catalog's read model, which answers every listing with every card (some 190 bytes a
	// template and the lengths of its slug and media URLs). A larger catalog fails readiness.
	IndexMaxTemplates int `env:"CATALOG_INDEX_MAX_TEMPLATES" default:"2000000"`
	// IndexPoll is how often a process reads the catalog's version when no change was
	// notified: the latest a lost notification's change is applied.
	IndexPoll time.Duration `env:"CATALOG_INDEX_POLL" default:"5s"`
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
