package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"syscall"
	"time"
)

// fault is one injected failure and how the platform came back from it.
type fault struct {
	name string
	// kind says how recovery is measured: "replica" (the first request the replica served
	// after it), "nats" (the first event published after it that the harness received),
	// "postgres" (the first state change any service accepted after it).
	kind    string
	target  *replica
	at      time.Time
	down    time.Duration
	back    time.Duration
	err     error
	atShare float64
	// graceful marks a SIGTERM of target: its shutdown must lose no accepted request.
	graceful bool
}

// faultPlan is the run's faults, each fired once the load has done a share of its work.
type faultPlan struct {
	mu     sync.Mutex
	faults []*fault
}

// schedule draws from rng when each fault fires: every service replica is killed with
// SIGKILL once and stopped with SIGTERM once (a graceful shutdown under load, restarted like a
// rolling update), every NATS node is stopped once (SIGTERM or SIGKILL) and started again, and
// Postgres is restarted twice (fast and immediate shutdown). Each kind runs on its own track,
// one fault at a time, so faults of different kinds may overlap.
func schedule(rng *rand.Rand, p *platform, nodes []*natsNode, pg *proc) [][]func(ctx context.Context, l *load, out *faultPlan) {
	shares := func(n int, lo, hi float64) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = lo + rng.Float64()*(hi-lo)
		}
		sort.Float64s(s)
		return s
	}
	type replicaFault struct {
		r   *replica
		sig syscall.Signal
	}
	var stops []replicaFault
	for _, r := range p.replicas() {
		stops = append(stops, replicaFault{r, syscall.SIGKILL}, replicaFault{r, syscall.SIGTERM})
	}
	rng.Shuffle(len(stops), func(i, j int) { stops[i], stops[j] = stops[j], stops[i] })
	var services []func(ctx context.Context, l *load, out *faultPlan)
	for i, share := range shares(len(stops), 0.05, 0.9) {
		rf := stops[i]
		pause := time.Duration(200+rng.IntN(2800)) * time.Millisecond
		services = append(services, func(ctx context.Context, l *load, out *faultPlan) {
			if !l.waitProgress(ctx, share) {
				return
			}
			name := "kill -9 " + rf.r.name
			if rf.sig == syscall.SIGTERM {
				name = "SIGTERM " + rf.r.name
				rf.r.draining.Store(true)
			}
			f := out.add(&fault{name: name, kind: "replica", target: rf.r, graceful: rf.sig == syscall.SIGTERM, atShare: l.progress()})
			f.bounce(ctx, rf.r.proc, rf.sig, pause, func() { rf.r.draining.Store(false) })
		})
	}
	var broker []func(ctx context.Context, l *load, out *faultPlan)
	order := rng.Perm(len(nodes))
	for i, share := range shares(len(nodes), 0.1, 0.8) {
		n := nodes[order[i]]
		sig, how := syscall.SIGTERM, "SIGTERM"
		if rng.IntN(2) == 0 {
			sig, how = syscall.SIGKILL, "SIGKILL"
		}
		pause := time.Duration(2000+rng.IntN(4000)) * time.Millisecond
		broker = append(broker, func(ctx context.Context, l *load, out *faultPlan) {
			if !l.waitProgress(ctx, share) {
				return
			}
			f := out.add(&fault{name: fmt.Sprintf("stop %s (%s)", n.name, how), kind: "nats", atShare: l.progress()})
			// The next node stops only once this one is current again (bounce waits until
			// it is ready), so that two of three always hold every stream's quorum.
			f.bounce(ctx, n.proc, sig, pause, nil)
		})
	}
	var database []func(ctx context.Context, l *load, out *faultPlan)
	modes := []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGINT, "fast"}, {syscall.SIGQUIT, "immediate"}}
	rng.Shuffle(len(modes), func(i, j int) { modes[i], modes[j] = modes[j], modes[i] })
	for i, share := range shares(len(modes), 0.1, 0.9) {
		m := modes[i]
		database = append(database, func(ctx context.Context, l *load, out *faultPlan) {
			if !l.waitProgress(ctx, share) {
				return
			}
			f := out.add(&fault{name: "restart postgres -m " + m.name, kind: "postgres", atShare: l.progress()})
			f.bounce(ctx, pg, m.sig, 0, nil)
		})
	}
	return [][]func(ctx context.Context, l *load, out *faultPlan){services, broker, database}
}

// bounce stops p with sig, calls exited (if any) once it exited, starts it again after pause
// and waits until it is ready, recording how long it was down and when it was back.
func (f *fault) bounce(ctx context.Context, p *proc, sig syscall.Signal, pause time.Duration, exited func()) {
	f.err = p.signal(sig, time.Minute)
	if exited != nil {
		exited()
	}
	time.Sleep(pause)
	f.down = time.Since(f.at)
	if f.err == nil {
		f.err = p.start()
	}
	if f.err == nil {
		f.err = p.waitReady(ctx, 2*time.Minute)
	}
	f.back = time.Since(f.at)
}

func (fp *faultPlan) add(f *fault) *fault {
	f.at = time.Now()
	fp.mu.Lock()
	fp.faults = append(fp.faults, f)
	fp.mu.Unlock()
	fmt.Printf("  %s  fault at %4.1f%% of the load: %s\n", clock(), 100*f.atShare, f.name)
	return f
}

// run plays each track in its own goroutine, in order, until ctx ends.
func (fp *faultPlan) run(ctx context.Context, l *load, tracks [][]func(ctx context.Context, l *load, out *faultPlan)) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, track := range tracks {
		wg.Go(func() {
			for _, step := range track {
				step(ctx, l, fp)
			}
		})
	}
	return &wg
}

// recovery is how long after f the platform did useful work again: the first request the
// killed replica answered with a 2xx, the first event published after a NATS node stopped
// that reached the harness, the first state change accepted after Postgres restarted.
func recovery(f *fault, ok []success, seen map[string]seenEvent) (time.Duration, bool) {
	best := time.Duration(-1)
	consider := func(d time.Duration) {
		if best < 0 || d < best {
			best = d
		}
	}
	switch f.kind {
	case "replica":
		for _, s := range ok {
			if s.replica == f.target && s.start.After(f.at) {
				consider(s.end.Sub(f.at))
			}
		}
	case "postgres":
		for _, s := range ok {
			if s.start.After(f.at) {
				consider(s.end.Sub(f.at))
			}
		}
	case "nats":
		for _, e := range seen {
			if e.ceTime.After(f.at) {
				consider(e.received.Sub(f.at))
			}
		}
	}
	return best, best >= 0
}

// measurable reports whether recovery from f could be observed at all: a short load
// (FAULT_OPS) can end before a track's last faults, a fault near the end can have its process
// back only after the load, and a replica back near the end may see no further request to its
// service, since the load's last operations can all be another service's.
func measurable(f *fault, ok []success, loadEnd time.Time) bool {
	back := f.at.Add(f.back)
	if f.kind != "replica" {
		return back.Before(loadEnd)
	}
	for _, s := range ok {
		if s.replica.svc == f.target.svc && s.start.After(back) {
			return true
		}
	}
	return false
}

// clock is the wall time for progress lines.
func clock() string { return time.Now().Format("15:04:05") }
