package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// opKind is one kind of operation of the load; each makes one or two state changes.
type opKind int

const (
	opRegister opKind = iota // POST /v1/auth/register: user.registered
	opAPIKey                 // create and revoke an API key: api_key.created, api_key.revoked
	opPreview                // POST /v1/svg-previews/generate: a preview job, then content.svg_preview.generated.v1
	opAgentRun               // create a task, queue a run on a QA seat: an agent-run job, then agentteam.run.*
)

// changesOf is how many state changes an operation of each kind makes.
var changesOf = map[opKind]int{opRegister: 1, opAPIKey: 2, opPreview: 1, opAgentRun: 2}

// planOps shuffles operations making total state changes: a quarter registrations, a quarter
// API-key events, a fifth previews and the rest agent-run tasks and runs.
func planOps(total int, rng *rand.Rand) []opKind {
	registrations, keys, previews := total*25/100, total*125/1000, total*20/100
	runs := (total - registrations - 2*keys - previews) / 2
	registrations += total - registrations - 2*keys - previews - 2*runs
	var ops []opKind
	for kind, n := range map[opKind]int{opRegister: registrations, opAPIKey: keys, opPreview: previews, opAgentRun: runs} {
		for range n {
			ops = append(ops, kind)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i] < ops[j] })
	rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	return ops
}

// stepStats counts one kind of API call of the load.
type stepStats struct {
	Accepted   int
	Reconciled int
	Unknown    int
	Refused    int
	Failed     []string
}

// load drives the operations and remembers what the services accepted, for the checks.
type load struct {
	p      *platform
	c      *client
	f      *fixtures
	total  int
	done   atomic.Int64
	unique uint64

	mu    sync.Mutex
	steps map[string]*stepStats
	// emails registered (accepted, or found taken after an unknown attempt).
	emails []string
	// apiKeys are the ids of the created keys; revoked the ones revoked.
	apiKeys map[string]bool
	// previews, tasks and runs are the ids the services answered.
	previews, tasks, runs []string
}

func newLoad(p *platform, c *client, f *fixtures, ops []opKind, seed uint64) *load {
	total := 0
	for _, k := range ops {
		total += changesOf[k]
	}
	return &load{p: p, c: c, f: f, total: total, unique: seed, steps: map[string]*stepStats{}, apiKeys: map[string]bool{}}
}

// progress is the share of the planned state changes done so far.
func (l *load) progress() float64 { return float64(l.done.Load()) / float64(l.total) }

// run runs ops with concurrency workers and returns when every one is done.
func (l *load) run(ctx context.Context, ops []opKind, concurrency int) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for i := range next {
				l.op(ctx, i, ops[i])
			}
		})
	}
	for i := range ops {
		select {
		case next <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
}

func (l *load) op(ctx context.Context, i int, kind opKind) {
	switch kind {
	case opRegister:
		l.register(ctx, i)
	case opAPIKey:
		l.apiKey(ctx, i)
	case opPreview:
		l.preview(ctx, i)
	case opAgentRun:
		l.agentRun(ctx, i)
	}
}

// step sends one state change and records its outcome; ok reports whether the service
// applied it, explain whether an answer that is not 2xx is what a retry of an applied request
// gets (a conflict after an unknown attempt).
func (l *load) step(ctx context.Context, name string, n int, req request, explain func(code int) bool) (response, bool) {
	res, err := l.c.do(ctx, uint64(n), req)
	defer l.done.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.steps[name]
	if st == nil {
		st = &stepStats{}
		l.steps[name] = st
	}
	st.Unknown += res.unknown
	st.Refused += res.refused
	switch {
	case err != nil:
		st.Failed = append(st.Failed, fmt.Sprintf("%s #%d: %v", name, n, err))
		return res, false
	case res.code >= 200 && res.code < 300:
		st.Accepted++
		return res, true
	case res.unknown > 0 && explain != nil && explain(res.code):
		st.Reconciled++
		return res, true
	default:
		st.Failed = append(st.Failed, fmt.Sprintf("%s #%d: %d %s", name, n, res.code, truncate(string(res.body), 200)))
		return res, false
	}
}

func (l *load) register(ctx context.Context, i int) {
	t := l.f.tenants[i%len(l.f.tenants)]
	email := fmt.Sprintf("user-%d@%s.test", i, t.slug)
	_, ok := l.step(ctx, "register", i, request{svc: l.p.identity, method: http.MethodPost, path: "/v1/auth/register",
		body: jsonBody(map[string]any{"tenant_slug": t.slug, "email": email, "password": "correct-horse-battery", "full_name": fmt.Sprintf("User %d", i)})},
		func(code int) bool { return code == http.StatusConflict })
	if ok {
		l.mu.Lock()
		l.emails = append(l.emails, email)
		l.mu.Unlock()
	}
}

func (l *load) apiKey(ctx context.Context, i int) {
	t := l.f.tenants[i%len(l.f.tenants)]
	res, ok := l.step(ctx, "api_key.create", i, request{svc: l.p.identity, method: http.MethodPost, path: "/v1/tenants/" + t.id + "/api-keys",
		token: t.adminToken, body: jsonBody(map[string]any{"name": fmt.Sprintf("key-%d", i), "scopes": []string{"renders:read"}, "rate_limit_rpm": 60})}, nil)
	var key struct {
		ID string `json:"id"`
	}
	if !ok || res.decode(&key) != nil || key.ID == "" {
		l.done.Add(1)
		return
	}
	_, revoked := l.step(ctx, "api_key.revoke", i, request{svc: l.p.identity, method: http.MethodDelete,
		path: "/v1/tenants/" + t.id + "/api-keys/" + key.ID, token: t.adminToken},
		func(code int) bool { return code == http.StatusNotFound || code == http.StatusConflict })
	l.mu.Lock()
	l.apiKeys[key.ID] = revoked
	l.mu.Unlock()
}

func (l *load) preview(ctx context.Context, i int) {
	scene := l.f.sceneIDs[i%len(l.f.sceneIDs)]
	var attempt atomic.Int64
	body := func() (io.Reader, string) {
		// Each attempt sends an image of its own, so that the AI stub tells a retried request's
		// preview from the first one's.
		return previewForm(scene, uint64(i), uint64(attempt.Add(1)), l.unique)
	}
	res, ok := l.step(ctx, "preview", i, request{svc: l.p.content, method: http.MethodPost, path: "/v1/svg-previews/generate",
		token: l.f.opsToken, body: body}, nil)
	var p struct {
		ID string `json:"svg_preview_id"`
	}
	if ok && res.decode(&p) == nil && p.ID != "" {
		l.mu.Lock()
		l.previews = append(l.previews, p.ID)
		l.mu.Unlock()
	}
}

func (l *load) agentRun(ctx context.Context, i int) {
	seat := l.f.seats[i%len(l.f.seats)]
	title := fmt.Sprintf("fault-task-%d", i)
	res, ok := l.step(ctx, "task.create", i, request{svc: l.p.agentteam, method: http.MethodPost, path: "/api/orgboard/tasks", token: l.f.opsToken,
		body: jsonBody(map[string]any{"teamId": seat.teamID, "title": title, "description": "Check " + title + " end to end.", "type": "Feature"})}, nil)
	var task struct {
		ID string `json:"id"`
	}
	if !ok || res.decode(&task) != nil || task.ID == "" {
		l.done.Add(1)
		return
	}
	res, ok = l.step(ctx, "run.create", i, request{svc: l.p.agentteam, method: http.MethodPost, path: "/api/assembler/runs", token: l.f.opsToken,
		body: jsonBody(map[string]any{"seatId": seat.seatID, "workItemId": task.ID})}, nil)
	var r struct {
		ID string `json:"id"`
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tasks = append(l.tasks, task.ID)
	if ok && res.decode(&r) == nil && r.ID != "" {
		l.runs = append(l.runs, r.ID)
	}
}

// previewForm is the multipart body of a preview request: an 8×8 PNG whose pixels encode the
// operation and the attempt, and two color keys.
func previewForm(sceneID string, op, attempt, unique uint64) (io.Reader, string) {
	img := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	for i, v := range []uint64{op, attempt, unique} {
		for b := range 8 {
			img.Set(b, i, color.NRGBA{R: uint8(v >> (8 * b)), G: 0x80, B: uint8(i), A: 0xff})
		}
	}
	for y := 3; y < 8; y++ {
		for x := range 8 {
			img.Set(x, y, color.NRGBA{R: 0xe6, A: 0xff})
		}
	}
	var png64 bytes.Buffer
	_ = png.Encode(&png64, img)
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fw, _ := w.CreateFormFile("image", "card.png")
	_, _ = fw.Write(png64.Bytes())
	_ = w.WriteField("target_type", "scene")
	_ = w.WriteField("target_id", sceneID)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="color_keys"`)
	h.Set("Content-Type", "application/json")
	pw, _ := w.CreatePart(h)
	_, _ = pw.Write([]byte(`[{"element_key":"background","current_color":"#ffffff"},{"element_key":"title","current_color":"#e60000"}]`))
	_ = w.Close()
	return &buf, w.FormDataContentType()
}

// stepsSnapshot copies the per-step counts in name order.
func (l *load) stepsSnapshot() ([]string, map[string]stepStats) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]stepStats, len(l.steps))
	names := make([]string, 0, len(l.steps))
	for name, s := range l.steps {
		out[name] = *s
		names = append(names, name)
	}
	sort.Strings(names)
	return names, out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// waitProgress blocks until the load reached share of its state changes or ctx ends.
func (l *load) waitProgress(ctx context.Context, share float64) bool {
	for l.progress() < share {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return true
}
