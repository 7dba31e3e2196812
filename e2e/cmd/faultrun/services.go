package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// replicasPerService is how many processes of each service run side by side.
const replicasPerService = 2

// service is one of the three services, run as replicas on their own ports.
type service struct {
	name     string
	replicas []*replica
}

// replica is one process of a service.
type replica struct {
	*proc
	svc *service
	url string
	// draining is set while the replica shuts down after SIGTERM (from the signal until it
	// exited); drainServed counts the answers it gave meanwhile and drainBroken the attempts
	// sent to it whose connection broke (an accepted request lost by the shutdown).
	// ready is the replica's last readiness probe: the client sends new requests to ready
	// replicas only, as a load balancer does. terminating is set once /readyz said
	// shutting_down and cleared when it next passes: like an endpoint Kubernetes marks
	// terminating, such a replica gets no new request even when no replica is ready.
	ready       atomic.Bool
	terminating atomic.Bool
	draining    atomic.Bool
	drainServed atomic.Int64
	drainBroken atomic.Int64
	// drainErrs keeps the first few broken attempts' errors, for the report.
	drainMu   sync.Mutex
	drainErrs []string
}

// broke records an attempt sent to r whose connection broke while r was draining, after it
// had been in flight for took (a request still running at the drain's end took its whole
// deadline).
func (r *replica) broke(method, path string, took time.Duration, err error) {
	r.drainBroken.Add(1)
	r.drainMu.Lock()
	defer r.drainMu.Unlock()
	if len(r.drainErrs) < 5 {
		r.drainErrs = append(r.drainErrs, fmt.Sprintf("%s %s after %s in flight: %v", method, path, took.Round(time.Millisecond), err))
	}
}

// pick returns the replica to try first for the n-th request: round robin.
func (s *service) pick(n uint64) int { return int(n % uint64(len(s.replicas))) }

// route returns the first replica from the n-th on whose readiness probe passed, as a load
// balancer sends only to ready endpoints. With none ready (a dependency blinks for all of
// them) it fails open to the first that is not terminating, and only when every replica is
// terminating to the n-th: a replica that is shutting down must not get new requests because
// its peer's NATS connection is reconnecting (seed 417252: SIGTERM identity-svc-2 while
// identity-svc-1 reconnected to NATS sent 49 requests to the draining replica, and one DELETE
// written onto an idle keep-alive connection as Shutdown closed it broke).
func (s *service) route(n int) *replica {
	for _, usable := range []func(*replica) bool{
		func(r *replica) bool { return r.ready.Load() },
		func(r *replica) bool { return !r.terminating.Load() },
	} {
		for k := range len(s.replicas) {
			if r := s.replicas[(n+k)%len(s.replicas)]; usable(r) {
				return r
			}
		}
	}
	return s.replicas[n%len(s.replicas)]
}

// probeInterval is how often the harness, like a load balancer, asks each replica's /readyz.
const probeInterval = 100 * time.Millisecond

// probe keeps r.ready current from GET /readyz every probeInterval until ctx ends.
func (r *replica) probe(ctx context.Context) {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 500 * time.Millisecond}
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		ready := false
		if req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/readyz", nil); err == nil {
			if resp, err := hc.Do(req); err == nil {
				ready = resp.StatusCode == http.StatusOK
				body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				_ = resp.Body.Close()
				if bytes.Contains(body, []byte(`"status":"shutting_down"`)) {
					r.terminating.Store(true)
				}
			}
		}
		if ready {
			r.terminating.Store(false)
		}
		r.ready.Store(ready)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// platform is the services under test with what the harness needs to call them.
type platform struct {
	identity, content, agentteam *service
	identityEnv                  []string
	identityBin                  string
}

// serviceEnv is what every replica of the three services gets, and what differs per service.
type serviceEnv struct {
	binDir      string
	logs        string
	pgPort      int
	natsURL     string
	shared      sharedInfra
	aiURL       string
	skillsDir   string
	signingSeed []byte
}

// newPlatform prepares two replicas of each service on the given six ports (identity, content,
// agentteam, each twice), not started. Content and agentteam replica i trust identity replica
// i's key set.
func newPlatform(e serviceEnv, ports []int) *platform {
	issuer := "http://identity.faultrun.local"
	common := []string{
		"PATH=/usr/bin:/bin",
		"NATS_URL=" + e.natsURL,
		"NATS_STREAM_REPLICAS=3",
		"JWT_ISSUER=" + issuer,
		"LOG_LEVEL=warn",
		"DB_MAX_OPEN_CONNS=12",
		"DB_MAX_IDLE_CONNS=6",
	}
	encryption := base64.StdEncoding.EncodeToString(e.signingSeed)
	url := func(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }
	p := &platform{
		identity:    &service{name: "identity-svc"},
		content:     &service{name: "content-svc"},
		agentteam:   &service{name: "agentteam-svc"},
		identityBin: filepath.Join(e.binDir, "identity-svc"),
	}
	identityEnv := append([]string{
		"DATABASE_URL=" + pgURL(e.pgPort, "identity"),
		"REDIS_URL=" + e.shared.redisURL,
		"REDIS_KEY_PREFIX=" + e.shared.redisPrefix,
		"SIGNING_KEY=" + base64.StdEncoding.EncodeToString(e.signingSeed),
		"SIGNING_KEY_GENERATE=false",
		"ACCESS_TOKEN_TTL=3h",
		"OUTBOUND_ALLOW_LOOPBACK=true",
		"REGISTER_RATE_LIMIT_IP_PER_MIN=1000000",
		"REGISTER_RATE_LIMIT_TENANT_PER_MIN=1000000",
		// Retries come after seconds, not minutes, so that the run settles within its budget.
		"WEBHOOK_RETRY_SCHEDULE=2s,4s,8s,15s,30s,60s",
		"WEBHOOK_TIMEOUT=5s",
	}, common...)
	p.identityEnv = identityEnv
	contentEnv := func(i int) []string {
		return append([]string{
			"DATABASE_URL=" + pgURL(e.pgPort, "content"),
			"S3_ENDPOINT=" + e.shared.s3Endpoint,
			"S3_ACCESS_KEY=" + e.shared.s3Key,
			"S3_SECRET_KEY=" + e.shared.s3Secret,
			"S3_BUCKET=" + e.shared.bucket,
			"JWKS_URL=" + url(ports[i]) + "/.well-known/jwks.json",
			"SVG_PREVIEW_AI_URL=" + e.aiURL,
			"SVG_PREVIEW_AI_TIMEOUT=10s",
			"SVG_PREVIEW_LEASE=15s",
			"SVG_PREVIEW_STALE_AFTER=30s",
			"SVG_PREVIEW_REQUEUE_EVERY=5s",
			"SVG_PREVIEW_CONCURRENCY=4",
		}, common...)
	}
	agentteamEnv := func(i int) []string {
		return append([]string{
			"DATABASE_URL=" + pgURL(e.pgPort, "agentteam"),
			"JWKS_URL=" + url(ports[i]) + "/.well-known/jwks.json",
			"ENCRYPTION_KEY=" + encryption,
			"OUTBOUND_ALLOW_LOOPBACK=true",
			"SKILLS_SOURCE_DIR=" + e.skillsDir,
			"RUN_LEASE=15s",
			"RUN_SWEEP_INTERVAL=3s",
			"RUN_STALE_AFTER=20s",
			"RUN_WORKER_CONCURRENCY=4",
			"MODEL_TIMEOUT=10s",
			"MODEL_RETRY_BASE=200ms",
			"MODEL_RETRY_MAX=1s",
		}, common...)
	}
	for i := range replicasPerService {
		add := func(s *service, port int, env []string) {
			r := &replica{svc: s, url: url(port)}
			name := fmt.Sprintf("%s-%d", s.name, i+1)
			r.proc = &proc{
				name: name, bin: filepath.Join(e.binDir, s.name), args: []string{"serve"},
				env:     append([]string{fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", port)}, env...),
				logPath: filepath.Join(e.logs, name+".log"),
				ready:   func(ctx context.Context) error { return httpOK(ctx, r.url+"/readyz") },
			}
			s.replicas = append(s.replicas, r)
		}
		add(p.identity, ports[i], identityEnv)
		add(p.content, ports[replicasPerService+i], contentEnv(i))
		add(p.agentteam, ports[2*replicasPerService+i], agentteamEnv(i))
	}
	return p
}

func (p *platform) services() []*service { return []*service{p.identity, p.content, p.agentteam} }

func (p *platform) replicas() []*replica {
	var out []*replica
	for _, s := range p.services() {
		out = append(out, s.replicas...)
	}
	return out
}

// start launches every replica at once, so that both replicas of a service migrate and seed
// their empty database concurrently, and waits until all are ready.
func (p *platform) start(ctx context.Context) error {
	for _, r := range p.replicas() {
		if err := r.start(); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(p.replicas()))
	for _, r := range p.replicas() {
		wg.Go(func() {
			if err := r.waitReady(ctx, 2*time.Minute); err != nil {
				errs <- fmt.Errorf("%w (log: %s)", err, lastLine(r.logPath))
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// admin runs `identity-svc admin args...` against the run's identity database and decodes its
// JSON answer.
func (p *platform) admin(ctx context.Context, args ...string) (map[string]any, error) {
	cmd := exec.CommandContext(ctx, p.identityBin, append([]string{"admin"}, args...)...)
	cmd.Env = p.identityEnv
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("identity-svc admin %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("identity-svc admin %s: %w: %s", args[0], err, stdout.String())
	}
	return out, nil
}

// newSigningSeed makes the run's Ed25519 seed (identity's signing key; also the agentteam
// encryption key).
func newSigningSeed() []byte {
	seed := make([]byte, ed25519.SeedSize)
	_, _ = rand.Read(seed)
	return seed
}
