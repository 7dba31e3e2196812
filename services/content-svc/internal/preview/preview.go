// Package preview turns an image dropped on a project or scene into an SVG of its color zones,
// asynchronously: Create stores the image and records the preview as Generating with a job,
// and Process, run by a worker for each job, claims the preview, asks a PreviewGenerator for the SVG
// and records Ready or Failed with the generated event.
package preview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/pkg/jobs"
)

// Preview statuses.
const (
	Generating = "Generating"
	Ready      = "Ready"
	Failed     = "Failed"
)

// Target types.
const (
	TargetProject = "project"
	TargetScene   = "scene"
)

// maxColorKeys bounds the color keys of one preview.
const maxColorKeys = 64

var hexColor = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// ColorKey is a color element to find in the image: its key and its current color (#RGB or
// #RRGGBB).
type ColorKey struct {
	ElementKey   string
	CurrentColor string
}

// Preview is one SVG preview and its generation state.
type Preview struct {
	ID         string
	TargetType string
	TargetID   string
	// TenantID is the tenant of the user who asked for the preview, empty when a service did;
	// its events name it.
	TenantID          string
	ColorKeys         []ColorKey
	ImageKey          string
	ImageContentType  string
	Status            string
	SVGKey            string
	SVGURL            string
	FailureReason     string
	DetectedColorKeys []string
	Attempts          int
	CreatedAt         time.Time
	GeneratedAt       *time.Time
}

// Input is what a PreviewGenerator works from.
type Input struct {
	Image       []byte
	ContentType string
	ColorKeys   []ColorKey
}

// Output is a generated SVG and the color keys it holds regions for.
type Output struct {
	SVG               []byte
	DetectedColorKeys []string
}

// PreviewGenerator makes the SVG of an image's color zones. An error wrapped by Unusable
// means the input can never succeed; any other error may be retried.
type PreviewGenerator interface {
	Generate(ctx context.Context, in Input) (Output, error)
}

// unusable marks generator errors that retrying cannot fix.
type unusable struct{ err error }

func (u unusable) Error() string { return u.err.Error() }
func (u unusable) Unwrap() error { return u.err }

// Unusable wraps err to say the input can never be turned into a preview.
func Unusable(err error) error { return unusable{err: err} }

// IsUnusable reports whether err says the input can never be turned into a preview.
func IsUnusable(err error) bool {
	var u unusable
	return errors.As(err, &u)
}

// Store persists previews; the methods that change the status also write the job or event
// in the same transaction.
type Store interface {
	// TargetExists returns NotFound unless the project or scene exists and the caller may read
	// it (privileged callers read unpublished ones).
	TargetExists(ctx context.Context, targetType, targetID string, privileged bool) error
	// TargetColorKeys returns the color elements of a scene, or of every scene of a project
	// (one per key), as color keys with their default colors, at most limit of them.
	TargetColorKeys(ctx context.Context, targetType, targetID string, limit int) ([]ColorKey, error)
	// Create inserts p and queues its job.
	Create(ctx context.Context, p Preview) error
	// Get returns a preview of a target the caller may read, NotFound otherwise.
	Get(ctx context.Context, id string, privileged bool) (Preview, error)
	// LatestForScene returns the newest preview of a scene the caller may read, NotFound
	// when the scene is not readable or has none.
	LatestForScene(ctx context.Context, sceneID string, privileged bool) (Preview, error)
	// Claim leases a Generating preview to owner for length and counts the attempt; it returns
	// jobs.ErrNoWork when the preview is not Generating and a jobs.HeldError while another
	// worker's lease is live.
	Claim(ctx context.Context, id, owner string, length time.Duration) (Preview, jobs.Lease, error)
	// Renew extends the lease, and Release gives it back so that a redelivery can claim the
	// preview at once; both return jobs.ErrLeaseLost when l no longer holds the preview.
	Renew(ctx context.Context, l jobs.Lease) error
	Release(ctx context.Context, l jobs.Lease) error
	// Finish records the terminal state of p (Ready or Failed) and its generated event if l
	// still holds the preview, jobs.ErrLeaseLost otherwise.
	Finish(ctx context.Context, l jobs.Lease, p Preview) error
	// Requeue queues a new job for each preview Generating with no live lease and older
	// than before, up to limit, and returns how many it queued.
	Requeue(ctx context.Context, before time.Time, limit int) (int, error)
}

// Objects stores images and SVGs.
type Objects interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	Read(ctx context.Context, key string, limit int64) ([]byte, error)
	Remove(ctx context.Context, key string) error
	URL(key string) string
}

// Config tunes the service.
type Config struct {
	// MaxImageBytes bounds the dropped image.
	MaxImageBytes int64
	// MaxImagePixels bounds the dropped image's width times height.
	MaxImagePixels int64
	// Lease is how long a worker holds a preview before another may take it over.
	Lease time.Duration
	// MaxAttempts is how many generation attempts a preview gets before it fails.
	MaxAttempts int
	// StaleAfter is how long a preview may wait in Generating without a live lease before its
	// job is queued again.
	StaleAfter time.Duration
}

// Service implements the preview rules.
type Service struct {
	cfg       Config
	store     Store
	objects   Objects
	generator PreviewGenerator
	owner     string
	now       func() time.Time
}

// NewService returns a Service whose worker identifies its leases with a fresh id.
func NewService(cfg Config, store Store, objects Objects, generator PreviewGenerator) *Service {
	return &Service{
		cfg: cfg, store: store, objects: objects, generator: generator,
		owner: uuid.NewString(), now: time.Now,
	}
}

// detectImage names the content type and file extension of a PNG, JPEG or WebP image from
// its first bytes.
func detectImage(head []byte) (contentType, ext string, ok bool) {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png", "png", true
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg", "jpg", true
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return "image/webp", "webp", true
	}
	return "", "", false
}

// Request is what a client asks a preview for.
type Request struct {
	TargetType string
	TargetID   string
	ColorKeys  []ColorKey
	// Privileged callers (administrators, services) may preview unpublished projects and
	// scenes, as they may read them.
	Privileged bool
	// TenantID is the caller's tenant, empty for a service.
	TenantID string
}

// Create checks the request and the image, stores the image, and records the preview as
// Generating with its job. It returns Invalid for a bad target type, missing or malformed
// color keys, Unsupported for an image that is not PNG, JPEG or WebP, TooLarge for an image
// over the byte limit or whose header declares more pixels than the pixel limit, NotFound for
// an unknown target or one the caller may not read, and Unavailable when storage cannot be reached. An image whose header
// cannot be read is left to the worker, which fails it with the reason.
func (s *Service) Create(ctx context.Context, req Request, image io.Reader) (Preview, error) {
	var c check.Checker
	c.OneOf("target_type", &req.TargetType, []string{TargetProject, TargetScene})
	if _, err := uuid.Parse(req.TargetID); err != nil {
		c.Add("target_id", "must be a uuid")
	}
	if len(req.ColorKeys) > 0 {
		checkColorKeys(&c, req.ColorKeys)
	}
	if err := c.Err(); err != nil {
		return Preview{}, err
	}
	data, err := io.ReadAll(io.LimitReader(image, s.cfg.MaxImageBytes+1))
	if err != nil {
		return Preview{}, apperr.Wrap(err, apperr.Invalid, "unreadable_image", "the image could not be read")
	}
	if int64(len(data)) > s.cfg.MaxImageBytes {
		return Preview{}, apperr.E(apperr.TooLarge, "image_too_large", fmt.Sprintf("the image is larger than %d bytes", s.cfg.MaxImageBytes))
	}
	contentType, ext, ok := detectImage(data)
	if !ok {
		return Preview{}, apperr.E(apperr.Unsupported, "unsupported_image", "the image must be a PNG, JPEG or WebP file")
	}
	if err := s.checkPixels(data); err != nil && !errors.Is(err, errUnreadableHeader) {
		return Preview{}, err
	}
	if err := s.store.TargetExists(ctx, req.TargetType, req.TargetID, req.Privileged); err != nil {
		return Preview{}, err
	}
	if len(req.ColorKeys) == 0 {
		if req.ColorKeys, err = s.targetColorKeys(ctx, req); err != nil {
			return Preview{}, err
		}
	}
	p := Preview{
		ID: uuid.Must(uuid.NewV7()).String(), TargetType: req.TargetType, TargetID: req.TargetID, TenantID: req.TenantID,
		ColorKeys: req.ColorKeys, ImageContentType: contentType, Status: Generating, CreatedAt: s.now().UTC(),
	}
	p.ImageKey = fmt.Sprintf("svg-previews/%s/source.%s", p.ID, ext)
	if err := s.objects.Put(ctx, p.ImageKey, bytes.NewReader(data), int64(len(data)), contentType); err != nil {
		return Preview{}, err
	}
	if err := s.store.Create(ctx, p); err != nil {
		_ = s.objects.Remove(context.WithoutCancel(ctx), p.ImageKey)
		return Preview{}, err
	}
	return p, nil
}

// targetColorKeys answers the color elements of the request's target, the color keys of a
// request that names none. It returns apperr Invalid when the target has no color elements.
func (s *Service) targetColorKeys(ctx context.Context, req Request) ([]ColorKey, error) {
	keys, err := s.store.TargetColorKeys(ctx, req.TargetType, req.TargetID, maxColorKeys)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, check.Invalid("color_keys", "is required when the "+req.TargetType+" has no color elements")
	}
	return keys, nil
}

func checkColorKeys(c *check.Checker, keys []ColorKey) {
	if len(keys) == 0 || len(keys) > maxColorKeys {
		c.Add("color_keys", fmt.Sprintf("must list 1 to %d color keys", maxColorKeys))
		return
	}
	seen := map[string]bool{}
	for i, k := range keys {
		c.Length(fmt.Sprintf("color_keys[%d].element_key", i), k.ElementKey, 1, 100)
		if seen[k.ElementKey] {
			c.Add(fmt.Sprintf("color_keys[%d].element_key", i), "must not repeat an element_key")
		}
		seen[k.ElementKey] = true
		if !hexColor.MatchString(k.CurrentColor) {
			c.Add(fmt.Sprintf("color_keys[%d].current_color", i), "must be a #RGB or #RRGGBB color")
		}
	}
}

// Get returns a preview. It returns NotFound for an unknown id and, alike, for a preview of a
// project or scene the caller may not read (unpublished, for unprivileged callers).
func (s *Service) Get(ctx context.Context, id string, privileged bool) (Preview, error) {
	return s.store.Get(ctx, id, privileged)
}

// LatestForScene returns the scene's newest preview, whatever its status. It returns
// NotFound for a scene the caller may not read or that has none yet.
func (s *Service) LatestForScene(ctx context.Context, sceneID string, privileged bool) (Preview, error) {
	return s.store.LatestForScene(ctx, sceneID, privileged)
}

// Process generates the preview id if it is still Generating and no other worker holds it,
// renewing its lease meanwhile. A failure the generator may recover from is returned (so the
// job is redelivered) until the attempts run out; then, or for an unusable input, the preview
// is Failed with the reason. A generation cut short by shutdown (ctx done) gives the lease back
// and is returned, so that another worker takes the redelivered job at once. It returns nil when
// the preview is finished or another worker took it over, and a jobs.HeldError while another
// worker's lease on it is live.
func (s *Service) Process(ctx context.Context, id string) error {
	p, l, err := s.store.Claim(ctx, id, s.owner, s.cfg.Lease)
	if errors.Is(err, jobs.ErrNoWork) {
		return nil
	}
	if err != nil {
		return err
	}
	var out Output
	err = jobs.Keep(ctx, l, s.store.Renew, func(ctx context.Context) (err error) {
		out, err = s.generate(ctx, p)
		return err
	})
	if errors.Is(err, jobs.ErrLeaseLost) {
		return nil
	}
	if err != nil {
		// A shutdown that cut the generation short gives the lease back too, so that the
		// redelivered job is claimed at once by another worker instead of when the lease ends.
		if ctx.Err() != nil || (!IsUnusable(err) && p.Attempts < s.cfg.MaxAttempts) {
			_ = s.store.Release(context.WithoutCancel(ctx), l)
			return fmt.Errorf("preview: generate %s (attempt %d): %w", p.ID, p.Attempts, err)
		}
		p.Status, p.FailureReason = Failed, reason(err)
	} else {
		p.SVGKey = svgKey(p.ID)
		p.Status, p.SVGURL, p.DetectedColorKeys = Ready, s.objects.URL(p.SVGKey), out.DetectedColorKeys
	}
	now := s.now().UTC()
	p.GeneratedAt = &now
	// The work is done: it is recorded even when shutdown began meanwhile.
	err = s.store.Finish(context.WithoutCancel(ctx), l, p)
	if errors.Is(err, jobs.ErrLeaseLost) {
		return nil
	}
	return err
}

func (s *Service) generate(ctx context.Context, p Preview) (Output, error) {
	image, err := s.objects.Read(ctx, p.ImageKey, s.cfg.MaxImageBytes)
	if err != nil {
		return Output{}, err
	}
	if err := s.checkPixels(image); err != nil {
		return Output{}, Unusable(err)
	}
	out, err := s.generator.Generate(ctx, Input{Image: image, ContentType: p.ImageContentType, ColorKeys: p.ColorKeys})
	if err != nil {
		return Output{}, err
	}
	if !bytes.Contains(out.SVG, []byte("<svg")) {
		return Output{}, Unusable(errors.New("the generator answered something that is not an SVG"))
	}
	if err := s.objects.Put(ctx, svgKey(p.ID), bytes.NewReader(out.SVG), int64(len(out.SVG)), "image/svg+xml"); err != nil {
		return Output{}, err
	}
	return out, nil
}

// errUnreadableHeader says an image's header does not decode.
var errUnreadableHeader = errors.New("the image cannot be decoded: its header is unreadable")

// checkPixels reads the dimensions from the image's header, without decoding its pixels, and
// returns TooLarge when width times height is over the limit, errUnreadableHeader when the
// header does not decode.
func (s *Service) checkPixels(data []byte) error {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w (%v)", errUnreadableHeader, err)
	}
	if pixels := int64(cfg.Width) * int64(cfg.Height); pixels > s.cfg.MaxImagePixels {
		return apperr.E(apperr.TooLarge, "image_too_many_pixels", fmt.Sprintf(
			"the image is %d×%d pixels; at most %d pixels are accepted", cfg.Width, cfg.Height, s.cfg.MaxImagePixels))
	}
	return nil
}

func svgKey(id string) string { return fmt.Sprintf("svg-previews/%s/preview.svg", id) }

// reason is the failure reason recorded for clients: the error's text, bounded.
func reason(err error) string {
	msg := err.Error()
	if ae, ok := apperr.As(err); ok && ae.Message != "" {
		msg = ae.Message
	}
	msg = strings.TrimSpace(msg)
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return msg
}

// Requeue queues the job of every preview stuck in Generating without a live lease for
// longer than StaleAfter, for instance after its wake-up was dead-lettered, and returns how
// many it queued.
func (s *Service) Requeue(ctx context.Context) (int, error) {
	return s.store.Requeue(ctx, s.now().Add(-s.cfg.StaleAfter), 100)
}

// RunRequeuer calls Requeue every interval until ctx is done, logging failures and carrying
// on; it returns nil when ctx ends.
func (s *Service) RunRequeuer(ctx context.Context, every time.Duration, log *slog.Logger) error {
	return jobs.RunRequeuer(ctx, every, log, "stale svg previews", s.Requeue)
}

// MaxImageBytes is the largest image Create accepts.
func (s *Service) MaxImageBytes() int64 { return s.cfg.MaxImageBytes }
