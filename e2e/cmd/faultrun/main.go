// Command faultrun is the fault suite (make test-faults): it proves that nothing is lost while
// processes, NATS nodes and the database fail under load.
//
// It starts its own infrastructure, so that it can kill it without disturbing other tests: a
// private PostgreSQL cluster (initdb as the postgres user) and three clustered nats-server
// processes with JetStream (streams with three replicas), and borrows a key prefix of the shared
// Redis and a bucket of the shared MinIO. It builds the three services and runs two replicas of
// each, started together on the empty databases. Then it drives FAULT_OPS (10,000) state changes
// spread over the replicas — registrations and API-key events that become webhook deliveries to
// a local receiver, SVG previews generated through a local AI stub, agent runs answered by a
// local model stub — while it kills every replica with SIGKILL, stops each NATS node in turn
// and restarts Postgres (fast and immediate shutdown), at points drawn from a seeded RNG
// (FAULT_SEED replays a run). Finally it waits until the platform settled and checks that every
// event reached its consumers, every job ended once and was never worked on by two workers at
// once, every webhook attempt is recorded and none was sent twice, no event was stored twice
// beyond what JetStream's de-duplication absorbs, and migrations and seeds ran once. It prints
// the counts and the time to recover after each fault, and exits 1 on any violation.
//
//	go run ./e2e/cmd/faultrun                      (from the repository root)
//	FAULT_SEED=42 FAULT_OPS=2000 go run ./e2e/cmd/faultrun
//
// FAULT_CONCURRENCY (16) is how many requests run at once; FAULTS=off runs the load without
// faults; FAULT_SETTLE (5m) bounds the wait for the platform to settle. Logs and the NATS data
// stay in .state/faults for inspection; the private Postgres lives in a temporary directory.
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultrun:", err)
		code = 1
	}
	os.Exit(code)
}

// options are the run's settings, from the environment.
type options struct {
	seed        uint64
	ops         int
	concurrency int
	faults      bool
	settle      time.Duration
}

func readOptions() (options, error) {
	o := options{seed: rand.Uint64() % 1_000_000, ops: 10_000, concurrency: 16, faults: true, settle: 5 * time.Minute}
	var err error
	if v := os.Getenv("FAULT_SEED"); v != "" {
		if o.seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return o, fmt.Errorf("FAULT_SEED: %w", err)
		}
	}
	if v := os.Getenv("FAULT_OPS"); v != "" {
		if o.ops, err = strconv.Atoi(v); err != nil || o.ops < 100 {
			return o, fmt.Errorf("FAULT_OPS: want a number of at least 100, got %q", v)
		}
	}
	if v := os.Getenv("FAULT_CONCURRENCY"); v != "" {
		if o.concurrency, err = strconv.Atoi(v); err != nil || o.concurrency < 1 {
			return o, fmt.Errorf("FAULT_CONCURRENCY: want a positive number, got %q", v)
		}
	}
	if v := os.Getenv("FAULT_SETTLE"); v != "" {
		if o.settle, err = time.ParseDuration(v); err != nil {
			return o, fmt.Errorf("FAULT_SETTLE: %w", err)
		}
	}
	o.faults = os.Getenv("FAULTS") != "off"
	return o, nil
}

// phase prints a phase header with the time since the run started.
func phase(start time.Time, format string, args ...any) {
	fmt.Printf("== %s [%s] %s\n", clock(), time.Since(start).Round(100*time.Millisecond), fmt.Sprintf(format, args...))
}

func run(ctx context.Context) (int, error) {
	start := time.Now()
	opts, err := readOptions()
	if err != nil {
		return 2, err
	}
	repo, err := repoRoot()
	if err != nil {
		return 2, err
	}
	runID := strconv.FormatUint(opts.seed, 10) + "-" + strconv.FormatInt(time.Now().Unix()%100000, 10)
	fmt.Printf("faultrun: seed %d (replay with FAULT_SEED=%d), %d state changes, %d at once, faults %v\n",
		opts.seed, opts.seed, opts.ops, opts.concurrency, map[bool]string{true: "on", false: "off"}[opts.faults])
	rng := rand.New(rand.NewPCG(opts.seed, opts.seed^0x5eed))

	state := filepath.Join(repo, ".state", "faults")
	logs := filepath.Join(state, "logs")
	if err := os.RemoveAll(state); err != nil {
		return 2, err
	}
	for _, d := range []string{logs, filepath.Join(state, "nats"), filepath.Join(state, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 2, err
		}
	}

	phase(start, "build the three services")
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(state, "bin")+"/",
		"./services/identity-svc/cmd/identity-svc", "./services/content-svc/cmd/content-svc", "./services/agentteam-svc/cmd/agentteam-svc")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return 2, fmt.Errorf("build: %w", err)
	}

	shared := newSharedInfra(runID)
	if err := shared.check(ctx); err != nil {
		return 2, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := shared.cleanup(cctx); err != nil {
			fmt.Fprintln(os.Stderr, "faultrun: cleanup of the shared redis and minio:", err)
		}
	}()

	ports, err := freePorts(1 + 9 + 6)
	if err != nil {
		return 2, err
	}
	phase(start, "private postgres on 127.0.0.1:%d, three-node nats cluster on %d, %d, %d", ports[0], ports[1], ports[4], ports[7])
	// The data directory is outside the work tree: the server runs as the postgres user, who
	// cannot reach a clone under a private directory (/root, a mktemp -d); scripts/infra.sh does the same.
	pgDir, err := os.MkdirTemp("/var/tmp", "motionstudio-faults-pg-")
	if err != nil {
		return 2, err
	}
	defer os.RemoveAll(pgDir)
	pg, err := newPostgres(ctx, pgDir, logs, ports[0])
	if err != nil {
		return 2, err
	}
	if err := pg.start(); err != nil {
		return 2, err
	}
	defer pg.stop(syscall.SIGINT, 30*time.Second)
	if err := pg.waitReady(ctx, time.Minute); err != nil {
		return 2, fmt.Errorf("%w: %s", err, lastLine(pg.logPath))
	}
	if err := createDatabases(ctx, ports[0]); err != nil {
		return 2, err
	}
	nodes, err := newNATSCluster(filepath.Join(state, "nats"), logs, ports[1:10])
	if err != nil {
		return 2, err
	}
	for _, n := range nodes {
		if err := n.start(); err != nil {
			return 2, err
		}
		defer n.stop(syscall.SIGTERM, 30*time.Second)
	}
	for _, n := range nodes {
		if err := n.waitReady(ctx, time.Minute); err != nil {
			return 2, fmt.Errorf("%w: %s", err, lastLine(n.logPath))
		}
	}

	stubCtx, stopStubs := context.WithCancel(context.WithoutCancel(ctx))
	defer stopStubs()
	rc := newReceiver(opts.seed)
	model := newModelServer()
	ai := aiServer{tracker: newTracker()}
	receiverURL, err := serve(stubCtx, rc)
	if err != nil {
		return 2, err
	}
	modelURL, err := serve(stubCtx, model)
	if err != nil {
		return 2, err
	}
	aiURL, err := serve(stubCtx, ai)
	if err != nil {
		return 2, err
	}

	phase(start, "start two replicas of each service together on the empty databases")
	p := newPlatform(serviceEnv{
		binDir: filepath.Join(state, "bin"), logs: logs, pgPort: ports[0], natsURL: natsURL(nodes), shared: shared,
		aiURL: aiURL + "/generate", skillsDir: filepath.Join(repo, "services/agentteam-svc/starter-skills"), signingSeed: newSigningSeed(),
	}, ports[10:])
	defer func() {
		for _, r := range p.replicas() {
			r.stop(syscall.SIGTERM, 30*time.Second)
		}
	}()
	if err := p.start(ctx); err != nil {
		return 2, err
	}
	probeCtx, stopProbes := context.WithCancel(ctx)
	defer stopProbes()
	for _, r := range p.replicas() {
		fmt.Printf("  %s at %s (pid %d)\n", r.name, r.url, r.pid())
		go r.probe(probeCtx)
	}

	hb, err := connectHarness(natsURL(nodes))
	if err != nil {
		return 2, err
	}
	defer hb.close()
	seen := newEventLog()
	if err := hb.consume(ctx, seen); err != nil {
		return 2, err
	}

	phase(start, "set up tenants, webhooks, a project with scenes and agent teams")
	c := newClient()
	f, err := setup(ctx, p, c, runID, receiverURL, modelURL)
	if err != nil {
		return 2, err
	}

	ops := planOps(opts.ops, rng)
	l := newLoad(p, c, f, ops, opts.seed)
	plan := &faultPlan{}
	var tracks [][]func(ctx context.Context, l *load, out *faultPlan)
	if opts.faults {
		tracks = schedule(rng, p, nodes, pg)
	}
	phase(start, "load: %d state changes over %d operations, %d concurrent, with faults", l.total, len(ops), opts.concurrency)
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	faultsDone := plan.run(loadCtx, l, tracks)
	ticker := time.NewTicker(15 * time.Second)
	loadDone := make(chan struct{})
	go func() {
		l.run(loadCtx, ops, opts.concurrency)
		close(loadDone)
	}()
	loadStart := time.Now()
wait:
	for {
		select {
		case <-loadDone:
			break wait
		case <-ticker.C:
			fmt.Printf("  %s  %5.1f%% of the load (%d/%d state changes)\n", clock(), 100*l.progress(), l.done.Load(), l.total)
		}
	}
	ticker.Stop()
	loadTime := time.Since(loadStart)
	loadEnd := time.Now()
	// Faults still waiting for their share fire at once; the last ones finish their recovery.
	faultsDone.Wait()
	if ctx.Err() != nil {
		return 2, ctx.Err()
	}

	phase(start, "settle: wait until every event, job and webhook delivery is done (at most %s)", opts.settle)
	dbs, err := openDBs(ports[0])
	if err != nil {
		return 2, err
	}
	settleStart := time.Now()
	settled := false
	for time.Since(settleStart) < opts.settle && ctx.Err() == nil {
		left, err := pending(ctx, dbs, seen)
		if err == nil && left == "" {
			settled = true
			break
		}
		if int(time.Since(settleStart).Seconds())%10 == 0 {
			fmt.Printf("  %s  waiting for %s\n", clock(), orErr(left, err))
		}
		time.Sleep(time.Second)
	}
	settleTime := time.Since(settleStart)

	phase(start, "check")
	v := &verifier{dbs: dbs}
	if !settled {
		left, err := pending(ctx, dbs, seen)
		v.fail("the platform did not settle within %s: %s", opts.settle, orErr(left, err))
	}
	if err := report(ctx, v, repo, l, f, plan, hb, seen, rc, ai.tracker, model.tracker, p, nodes, pg, loadTime, loadEnd); err != nil {
		return 2, err
	}
	fmt.Printf("faultrun: seed %d, %s in all (load %s, settle %s)\n", opts.seed, time.Since(start).Round(time.Second),
		loadTime.Round(time.Second), settleTime.Round(time.Second))
	if len(v.violations) > 0 {
		fmt.Printf("FAIL: %d violations\n", len(v.violations))
		for _, s := range v.violations {
			fmt.Println("  -", s)
		}
		fmt.Printf("logs: %s\n", logs)
		return 1, nil
	}
	fmt.Println("PASS: nothing lost, nothing done twice")
	return 0, nil
}

func orErr(s string, err error) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// report runs the checks and prints the counts.
func report(ctx context.Context, v *verifier, repo string, l *load, f *fixtures, plan *faultPlan, hb *harnessBus,
	seen *eventLog, rc *receiver, ai, model *tracker, p *platform, nodes []*natsNode, pg *proc, loadTime time.Duration, loadEnd time.Time) error {
	events := seen.snapshot()
	rows, err := outboxRows(ctx, v.dbs)
	if err != nil {
		return err
	}

	names, steps := l.stepsSnapshot()
	fmt.Println("state changes (requests the services accepted):")
	fmt.Printf("  %-16s %9s %11s %8s %8s %7s\n", "request", "accepted", "reconciled", "unknown", "refused", "failed")
	var accepted, unknown, failed int
	for _, name := range names {
		s := steps[name]
		fmt.Printf("  %-16s %9d %11d %8d %8d %7d\n", name, s.Accepted, s.Reconciled, s.Unknown, s.Refused, len(s.Failed))
		accepted += s.Accepted + s.Reconciled
		unknown += s.Unknown
		failed += len(s.Failed)
		v.failList("requests that failed ("+name+")", s.Failed)
	}
	fmt.Printf("  %-16s %9d of %d sent in %s (%.0f/s); %d attempts with an unknown outcome, reconciled against the databases\n",
		"total", accepted, l.total, loadTime.Round(time.Second), float64(accepted)/loadTime.Seconds(), unknown)

	perStream, jobs := v.checkEvents(rows, events)
	fmt.Println("events (every outbox row against the harness's durable consumer on its stream, by ce-id):")
	fmt.Printf("  %-18s %7s %10s %12s %13s %5s\n", "stream", "sent", "delivered", "redelivered", "stored twice", "lost")
	var total streamCounts
	for _, s := range eventStreams {
		c := perStream[s]
		if c == nil {
			c = &streamCounts{}
		}
		fmt.Printf("  %-18s %7d %10d %12d %13d %5d\n", s, c.sent, c.delivered, c.redelivered, c.storedTwice, c.lost)
		total.sent += c.sent
		total.delivered += c.delivered
		total.redelivered += c.redelivered
		total.storedTwice += c.storedTwice
		total.lost += c.lost
	}
	fmt.Printf("  %-18s %7d %10d %12d %13d %5d\n", "total", total.sent, total.delivered, total.redelivered, total.storedTwice, total.lost)
	jobNames := make([]string, 0, len(jobs))
	for s := range jobs {
		jobNames = append(jobNames, s)
	}
	sort.Strings(jobNames)
	for _, s := range jobNames {
		fmt.Printf("  job wake-ups %s: %d\n", s, jobs[s])
	}
	if err := v.checkConsumers(ctx, rows); err != nil {
		return err
	}

	wc, err := v.checkWebhooks(ctx, rows, f, rc, f.ready)
	if err != nil {
		return err
	}
	fmt.Printf("webhooks: %d messages delivered to %d webhooks; attempts: %d recorded, %d received; %d messages took more than one attempt\n",
		wc.messages, len(f.webhooks), wc.dbAttempts, wc.receiverAttempts, wc.retried)

	jc, err := v.checkJobs(ctx, l, events, ai, model)
	if err != nil {
		return err
	}
	fmt.Printf("jobs: %d previews (%d Ready, %d Failed; %d AI calls), %d agent runs (%d Completed, %d Failed; %d model calls); %d jobs claimed more than once\n",
		jc.previews, jc.previewsReady, jc.previewsFailed, jc.aiCalls, jc.runs, jc.runsCompleted, jc.runsFailed, jc.modelCalls, jc.multiClaims)
	for reason, n := range jc.failedReasons {
		fmt.Printf("  failed %dx: %s\n", n, reason)
	}
	if err := v.checkRequests(ctx, l); err != nil {
		return err
	}
	if err := v.checkOnce(ctx, repo); err != nil {
		return err
	}

	dlq, err := hb.streamMsgs(ctx, "DEADLETTER")
	if err != nil {
		return err
	}
	if dlq > 0 {
		v.fail("dead letters: %d messages in DEADLETTER", dlq)
	}
	replicas, err := hb.replicas(ctx)
	if err != nil {
		return err
	}
	var rs []string
	for name, n := range replicas {
		rs = append(rs, fmt.Sprintf("%s R%d", name, n))
		if n != len(nodes) {
			v.fail("stream %s has %d replicas, want %d", name, n, len(nodes))
		}
	}
	sort.Strings(rs)
	fmt.Printf("streams: %s; dead letters: %d\n", strings.Join(rs, ", "), max(dlq, 0))

	fmt.Println("faults (recovery: the killed replica's first accepted request, the first event published after a NATS node stopped at the harness, the first state change after Postgres restarted):")
	ok := l.c.successes()
	plan.mu.Lock()
	faults := append([]*fault(nil), plan.faults...)
	plan.mu.Unlock()
	for _, fl := range faults {
		rec := "never"
		if d, found := recovery(fl, ok, events); found {
			rec = d.Round(time.Millisecond).String()
		} else if !measurable(fl, ok, loadEnd) {
			// Nothing measures these but the process coming back (a failure to is fl.err).
			rec = "- (no request or load after it was back)"
		}
		fmt.Printf("  %-40s at %5.1f%%  down %6s  back %7s  recovered after %s\n", fl.name, 100*fl.atShare,
			fl.down.Round(time.Millisecond), fl.back.Round(time.Millisecond), rec)
		if fl.err != nil {
			v.fail("fault %s: %v", fl.name, fl.err)
		}
		if rec == "never" {
			v.fail("fault %s: no recovery observed", fl.name)
		}
		if fl.graceful {
			served, broken := fl.target.drainServed.Load(), fl.target.drainBroken.Load()
			fmt.Printf("  %-40s answered %d requests while shutting down, broke %d\n", "", served, broken)
			if broken > 0 {
				fl.target.drainMu.Lock()
				v.fail("fault %s: %d accepted requests lost by the graceful shutdown: %s", fl.name, broken, strings.Join(fl.target.drainErrs, "; "))
				fl.target.drainMu.Unlock()
			}
		}
	}
	var procs []*proc
	for _, r := range p.replicas() {
		procs = append(procs, r.proc)
	}
	for _, n := range nodes {
		procs = append(procs, n.proc)
	}
	procs = append(procs, pg)
	for _, pr := range procs {
		crashes, failedStarts := pr.report()
		for _, c := range crashes {
			v.fail("crash: %s", c)
		}
		if failedStarts > 0 {
			fmt.Printf("  %s: %d start attempts exited before it was ready (restarted)\n", pr.name, failedStarts)
		}
	}
	return nil
}
