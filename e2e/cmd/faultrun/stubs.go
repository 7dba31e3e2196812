package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/motionstudio/platform/e2e/modelstub"
)

// tracker counts the requests a stub got per job key and notices when two of them for the same
// key were in flight at once: two workers processing one job.
type tracker struct {
	mu       sync.Mutex
	inflight map[string]int
	calls    map[string]int
	overlaps map[string]int
}

func newTracker() *tracker {
	return &tracker{inflight: map[string]int{}, calls: map[string]int{}, overlaps: map[string]int{}}
}

// enter records a call for key and answers how many calls key had, this one included.
func (t *tracker) enter(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls[key]++
	t.inflight[key]++
	if t.inflight[key] > 1 {
		t.overlaps[key]++
	}
	return t.calls[key]
}

func (t *tracker) leave(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inflight[key]--
}

// snapshot copies the calls and overlaps per key.
func (t *tracker) snapshot() (calls, overlaps map[string]int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	calls, overlaps = make(map[string]int, len(t.calls)), make(map[string]int, len(t.overlaps))
	for k, v := range t.calls {
		calls[k] = v
	}
	for k, v := range t.overlaps {
		overlaps[k] = v
	}
	return calls, overlaps
}

// hold keeps a request in flight for d, or until its client goes away (a killed worker), so
// that overlapping work on one job has a window to show.
func hold(r *http.Request, d time.Duration) {
	select {
	case <-r.Context().Done():
	case <-time.After(d):
	}
}

// serve runs h on a free loopback port until ctx ends and returns its base URL.
func serve(ctx context.Context, h http.Handler) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return "http://" + l.Addr().String(), nil
}

// receiver is the webhook endpoint: it records every attempt per (webhook, event id) and fails
// the first attempt of a few events (503) so that the retry path runs too.
type receiver struct {
	*tracker
	seed uint64

	mu sync.Mutex
	// answered counts attempts per key that got a 2xx answer from the receiver.
	answered map[string]int
}

func newReceiver(seed uint64) *receiver {
	return &receiver{tracker: newTracker(), seed: seed, answered: map[string]int{}}
}

// failsFirst says whether an event's first attempt is answered 503 (about 3% of events).
func (rc *receiver) failsFirst(eventID string) bool {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", rc.seed, eventID)
	return h.Sum64()%100 < 3
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("webhook-id")
	if r.Method != http.MethodPost || id == "" {
		http.Error(w, "not a webhook", http.StatusBadRequest)
		return
	}
	_, _ = io.Copy(io.Discard, r.Body)
	key := r.URL.Path + "|" + id
	first := rc.enter(key) == 1
	defer rc.leave(key)
	hold(r, 10*time.Millisecond)
	if first && rc.failsFirst(id) {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	rc.mu.Lock()
	rc.answered[key]++
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// answeredSnapshot copies the 2xx answers per key.
func (rc *receiver) answeredSnapshot() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.answered))
	for k, v := range rc.answered {
		out[k] = v
	}
	return out
}

// modelKey finds the run's task title in a chat-completions request.
var modelKey = regexp.MustCompile(`fault-task-[0-9]+`)

// modelServer is the OpenAI-compatible stub agent runs call (e2e/modelstub), tracking the
// requests per task.
type modelServer struct {
	*tracker
	stub *modelstub.Stub
}

func newModelServer() *modelServer {
	return &modelServer{tracker: newTracker(), stub: &modelstub.Stub{Reply: "QA: the fault run's task is done."}}
}

func (m *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	key := string(modelKey.Find(body))
	if key != "" {
		m.enter(key)
		defer m.leave(key)
		hold(r, 30*time.Millisecond)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	m.stub.ServeHTTP(w, r)
}

// aiServer stands in for content-svc's external SVG preview service (SVG_PREVIEW_AI_URL),
// tracking the requests per image: every preview request of the run sends an image of its own.
type aiServer struct{ *tracker }

func (a aiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ImageBase64 string `json:"image_base64"`
		ColorKeys   []struct {
			ElementKey string `json:"element_key"`
		} `json:"color_keys"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.ImageBase64 == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	key := imageKey(req.ImageBase64)
	a.enter(key)
	defer a.leave(key)
	hold(r, 20*time.Millisecond)
	keys := make([]string, len(req.ColorKeys))
	for i, k := range req.ColorKeys {
		keys[i] = k.ElementKey
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"svg":                 `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8" fill="#e60000"/></svg>`,
		"detected_color_keys": keys,
	})
}

// imageKey names an image by its content.
func imageKey(base64Image string) string {
	sum := sha256.Sum256([]byte(base64Image))
	return hex.EncodeToString(sum[:8])
}
