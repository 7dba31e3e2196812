package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/motionstudio/platform/e2e/modelstub"
)

// runs measures agent runs through the queue: it serves a model stub that answers at once,
// configures an AI seat on the seeded team with a connection to it, queues -n runs (one per new
// task) with POST /api/assembler/runs from -concurrency clients, and waits until every run
// finished. It prints runs per second (first request to last finish) and the percentiles of
// each run's createdAt-to-finishedAt time: with the model answering at once, that is what the
// queue (outbox relay, JetStream, claim, prompt assembly, finish) adds to a run.
func runs(ctx context.Context, args []string) error {
	o, err := parseRunFlags("runs", args, 200, 200)
	if err != nil {
		return err
	}
	c := o.client

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	stub := &http.Server{Handler: &modelstub.Stub{}, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = stub.Serve(l) }()
	defer stub.Close()

	var conn, seat, agent idOnly
	steps := []struct {
		path string
		body any
		out  *idOnly
	}{
		{"/api/orgboard/model-connections", map[string]any{"organizationId": o.org, "name": "Bench stub", "baseUrl": "http://" + l.Addr().String() + "/v1", "model": "stub", "apiKey": "sk-bench-stub"}, &conn},
		{"/api/orgboard/seats", map[string]any{"teamId": o.team, "roleName": "Bench agent"}, &seat},
	}
	for _, s := range steps {
		if err := c.post(ctx, s.path, s.body, s.out); err != nil {
			return err
		}
	}
	if err := c.post(ctx, "/api/orgboard/seats/"+seat.ID+"/agent", map[string]any{"name": "Bench", "apiConfigId": conn.ID}, &agent); err != nil {
		return err
	}
	tasks, err := newTasks(ctx, c, o.team, "Run", o.n+o.serial, o.concurrency)
	if err != nil {
		return err
	}
	start, finished, err := burst(ctx, c, seat.ID, tasks[:o.n], o.concurrency)
	if err != nil {
		return err
	}
	last, failed := ended(finished)
	var took []time.Duration
	for _, r := range finished {
		took = append(took, r.FinishedAt.Sub(r.CreatedAt))
	}
	fmt.Printf("%-26s %9.0f runs/s (%d runs at once, %d failed)   queued to finished: p50 %8.3f ms   p99 %8.3f ms\n",
		"agentteam-runs-burst", float64(len(finished))/last.Sub(start).Seconds(), len(finished), failed, pct(took, 0.5), pct(took, 0.99))

	// One run at a time: nothing waits behind another run, so queued-to-finished is the queue's
	// own cost per run (the stub answers at once).
	took = took[:0]
	for _, task := range tasks[o.n:] {
		var r struct {
			ID string `json:"id"`
		}
		if err := c.post(ctx, "/api/assembler/runs", map[string]any{"seatId": seat.ID, "workItemId": task}, &r); err != nil {
			return err
		}
		for {
			var got runRecord
			if err := c.get(ctx, "/api/assembler/runs/"+r.ID, &got); err != nil {
				return err
			}
			if got.Status == "Completed" || got.Status == "Failed" {
				took = append(took, got.FinishedAt.Sub(got.CreatedAt))
				break
			}
			// The service's own timestamps are measured, so polling slower changes nothing
			// but the CPU the poll takes from the run it waits for.
			time.Sleep(10 * time.Millisecond)
		}
	}
	if len(took) > 0 {
		fmt.Printf("%-26s %9d runs   queue overhead per run (queued to finished, model answering at once): p50 %8.3f ms   p99 %8.3f ms\n",
			"agentteam-runs-one-by-one", len(took), pct(took, 0.5), pct(took, 0.99))
	}
	return nil
}

// runFlags are the flags of the commands that queue runs.
type runFlags struct {
	client                 *apiClient
	org, team              string
	n, serial, concurrency int
}

// parseRunFlags parses the flags of the command name (-base, -token-file, -org, -team, -n,
// -serial, -concurrency; n and serial their defaults) and reads the token.
func parseRunFlags(name string, args []string, n, serial int) (runFlags, error) {
	var o runFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	base := fs.String("base", "http://127.0.0.1:8083", "the service's base URL")
	tokenFile := fs.String("token-file", "", "file holding the organization owner's bearer token")
	fs.StringVar(&o.org, "org", "", "the seeded organization id")
	fs.StringVar(&o.team, "team", "", "the seeded team id")
	fs.IntVar(&o.n, "n", n, "runs to queue at once")
	fs.IntVar(&o.serial, "serial", serial, "runs queued one at a time afterwards, each after the last finished")
	fs.IntVar(&o.concurrency, "concurrency", 8, "clients queueing runs at once")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if *tokenFile == "" || o.org == "" || o.team == "" {
		return o, errors.New("-token-file, -org and -team are required")
	}
	raw, err := os.ReadFile(*tokenFile)
	if err != nil {
		return o, fmt.Errorf("read token: %w", err)
	}
	o.client = &apiClient{base: *base, token: strings.TrimSpace(string(raw))}
	return o, nil
}

// newTasks creates n tasks on the team, titled "<title> <i>", from concurrency clients, and
// answers their ids.
func newTasks(ctx context.Context, c *apiClient, team, title string, n, concurrency int) ([]string, error) {
	tasks := make([]string, n)
	err := parallel(n, concurrency, func(i int) error {
		var t idOnly
		err := c.post(ctx, "/api/orgboard/tasks", map[string]any{"teamId": team, "title": fmt.Sprintf("%s %d", title, i), "type": "Task"}, &t)
		tasks[i] = t.ID
		return err
	})
	return tasks, err
}

// burst queues a run of the seat on each task from concurrency clients and waits until all of
// them finished; it answers when the first was queued and the finished runs.
func burst(ctx context.Context, c *apiClient, seatID string, tasks []string, concurrency int) (time.Time, []runRecord, error) {
	start := time.Now()
	if err := parallel(len(tasks), concurrency, func(i int) error {
		return c.post(ctx, "/api/assembler/runs", map[string]any{"seatId": seatID, "workItemId": tasks[i]}, nil)
	}); err != nil {
		return start, nil, err
	}
	finished, err := waitRuns(ctx, c, seatID, len(tasks))
	return start, finished, err
}

// pct is the p-th percentile of the durations in milliseconds; it sorts them.
func pct(d []time.Duration, p float64) float64 {
	slices.Sort(d)
	return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000
}

type idOnly struct {
	ID string `json:"id"`
}

type runRecord struct {
	Status     string    `json:"status"`
	CreatedAt  time.Time `json:"createdAt"`
	FinishedAt time.Time `json:"finishedAt"`
}

// waitRuns polls the seat's runs until n of them finished (Completed or Failed), for at most
// two minutes.
func waitRuns(ctx context.Context, c *apiClient, seatID string, n int) ([]runRecord, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var all []runRecord
		for page := 1; len(all) < n; page++ {
			var batch []runRecord
			if err := c.get(ctx, fmt.Sprintf("/api/assembler/runs?seatId=%s&page=%d&pageSize=100", seatID, page), &batch); err != nil {
				return nil, err
			}
			all = append(all, batch...)
			if len(batch) < 100 {
				break
			}
		}
		done := 0
		for _, r := range all {
			if r.Status == "Completed" || r.Status == "Failed" {
				done++
			}
		}
		if done >= n {
			return all, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("only %d of %d runs finished within two minutes", done, n)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// parallel calls f(0..n-1) from workers goroutines and returns the first error.
func parallel(n, workers int, f func(int) error) error {
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
					for range next {
					}
					return
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

// apiClient calls agentteam-svc with a bearer token.
type apiClient struct {
	base, token string
}

func (c *apiClient) post(ctx context.Context, path string, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, path, bytes.NewReader(raw), out)
}

func (c *apiClient) get(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodGet, path, nil, out)
}

func (c *apiClient) do(ctx context.Context, method, path string, body *bytes.Reader, out any) error {
	var req *http.Request
	var err error
	if body != nil {
		req, err = http.NewRequestWithContext(ctx, method, c.base+path, body)
	} else {
		req, err = http.NewRequestWithContext(ctx, method, c.base+path, nil)
	}
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var msg bytes.Buffer
		_, _ = msg.ReadFrom(resp.Body)
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, msg.String())
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// ended answers when the last of the runs finished and how many of them did not complete.
func ended(runs []runRecord) (last time.Time, failed int) {
	for _, r := range runs {
		if r.Status != "Completed" {
			failed++
		}
		if r.FinishedAt.After(last) {
			last = r.FinishedAt
		}
	}
	return last, failed
}
