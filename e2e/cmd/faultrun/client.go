package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// request is one API call; body makes a fresh body (and its content type) for every attempt.
type request struct {
	svc    *service
	method string
	path   string
	token  string
	body   func() (io.Reader, string)
}

// jsonBody encodes v for a request.
func jsonBody(v any) func() (io.Reader, string) {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return func() (io.Reader, string) { return bytes.NewReader(raw), "application/json" }
}

// response is the final answer of a call after its retries.
type response struct {
	code int
	body []byte
	// unknown counts attempts whose outcome the client cannot know: the connection broke after
	// the request was sent, or the server answered 5xx (its transaction may have committed).
	unknown int
	// refused counts attempts no replica took (connection refused, or 503 busy): never applied.
	refused int
	replica *replica
	start   time.Time
	end     time.Time
}

func (r response) decode(v any) error { return json.Unmarshal(r.body, v) }

// client calls the services, spreading requests over the replicas and retrying on connection
// errors, 5xx and 429 on the other replica until the request's deadline.
type client struct {
	http     *http.Client
	deadline time.Duration

	mu sync.Mutex
	ok []success
}

// success is a 2xx answer to a state change, for the time-to-recover of each fault.
type success struct {
	replica    *replica
	start, end time.Time
}

func newClient() *client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 64
	return &client{http: &http.Client{Transport: transport, Timeout: 30 * time.Second}, deadline: 3 * time.Minute}
}

// errGaveUp says a call found no replica able to answer before its deadline.
var errGaveUp = errors.New("no replica answered before the deadline")

// do sends req until a replica answers it with anything but 5xx or 429, starting with the
// replica picked for n and moving to the next after each failed attempt.
func (c *client) do(ctx context.Context, n uint64, req request) (response, error) {
	var res response
	deadline := time.Now().Add(c.deadline)
	i := req.svc.pick(n)
	backoff := 50 * time.Millisecond
	for attempt := 0; ; attempt++ {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return res, fmt.Errorf("%s %s: %w (%d unknown, %d refused)", req.method, req.path, errGaveUp, res.unknown, res.refused)
		}
		r := req.svc.route(i + attempt)
		code, body, start, err := c.once(ctx, r, req)
		switch {
		case err != nil && errors.Is(err, syscall.ECONNREFUSED):
			res.refused++
		case err != nil:
			res.unknown++
			if r.draining.Load() {
				r.broke(req.method, req.path, time.Since(start), err)
			}
		case code == http.StatusServiceUnavailable && (bytes.Contains(body, []byte(`"code":"busy"`)) ||
			bytes.Contains(body, []byte(`"code":"database_unavailable"`))):
			// Refused before any work: identity's password-hashing gate is full, or the
			// statement never reached the database.
			res.refused++
		case code >= 500:
			res.unknown++
		case code == http.StatusTooManyRequests:
		default:
			res.code, res.body, res.replica, res.start, res.end = code, body, r, start, time.Now()
			if r.draining.Load() {
				r.drainServed.Add(1)
			}
			if code < 300 && req.method != http.MethodGet {
				c.mu.Lock()
				c.ok = append(c.ok, success{replica: r, start: start, end: res.end})
				c.mu.Unlock()
			}
			return res, nil
		}
		if attempt%len(req.svc.replicas) == len(req.svc.replicas)-1 {
			// Every replica failed this round: wait before the next.
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 2*time.Second)
		}
	}
}

func (c *client) once(ctx context.Context, r *replica, req request) (int, []byte, time.Time, error) {
	var (
		body        io.Reader
		contentType string
	)
	if req.body != nil {
		body, contentType = req.body()
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, r.url+req.path, body)
	if err != nil {
		return 0, nil, time.Time{}, err
	}
	if contentType != "" {
		hr.Header.Set("Content-Type", contentType)
	}
	if req.token != "" {
		hr.Header.Set("Authorization", "Bearer "+req.token)
	}
	start := time.Now()
	resp, err := c.http.Do(hr)
	if err != nil {
		return 0, nil, start, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, start, err
	}
	return resp.StatusCode, b, start, nil
}

// successes copies the recorded 2xx answers to state changes.
func (c *client) successes() []success {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]success(nil), c.ok...)
}
