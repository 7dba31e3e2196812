// Package app is agentteam-svc's composition root: it wires configuration, infrastructure,
// domain services and the HTTP adapter, and runs them.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/revocation"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/pkg/telemetry"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/agentteam-svc/api"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/bus"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/cache"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/boardapi"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/connapi"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/memoryapi"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/orgapi"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/runapi"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/skillapi"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/runwatch"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/seat"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

// Name is the service name used in logs, metrics and the NATS connection.
const Name = "agentteam-svc"

// App is a running agent-team service.
type App struct {
	db     *gorm.DB
	bus    *natsx.Bus
	server *httpx.Server
	relay  *outbox.Relay
	// workers are what Run runs beside the relay: the HTTP server, the cache's listener, the
	// relay passes on commit, session revocations, the shared skill source's syncer, team
	// memory's change notices and, when it is on, the agent-run worker's consumer and sweeper.
	workers []service.Worker
	closers service.Closers
}

// Migrate applies the outbox's and the service's migrations.
func Migrate(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	db, err := pgdb.Open(ctx, cfg.DB)
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	return pgdb.Migrate(ctx, db, log, outbox.Migrations, store.Migrations)
}

// New connects to every dependency and builds the service. The caller must Close it.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (_ *App, err error) {
	a := &App{}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	stopTracing, err := telemetry.Setup(ctx, Name)
	if err != nil {
		return nil, err
	}
	a.closers.Add(func() { telemetry.Stop(stopTracing, log) })
	if a.db, err = pgdb.Open(ctx, cfg.DB); err != nil {
		return nil, err
	}
	a.closers.Add(func() { _ = pgdb.Close(a.db) })
	if a.bus, err = natsx.Connect(ctx, cfg.NATS, Name, log); err != nil {
		return nil, err
	}
	a.closers.Add(a.bus.Close)
	if err = a.bus.EnsureStreams(ctx, events.StreamAgentteamEvents, events.StreamJobs); err != nil {
		return nil, err
	}
	revoked := revocation.NewDenyList()
	verifier, err := authn.NewVerifier(ctx, authn.VerifierConfig{JWKSURL: cfg.Auth.JWKSURL, Issuer: cfg.Auth.Issuer,
		Audience: cfg.Auth.Audience, RefreshInterval: cfg.Auth.JWKSRefresh, Revocations: revoked})
	if err != nil {
		return nil, err
	}
	asyncDoc, ok := events.AsyncAPI(events.ServiceAgentteam)
	if !ok {
		return nil, fmt.Errorf("app: no AsyncAPI document for %s", Name)
	}
	a.server, err = httpx.New(httpx.Options{
		Service: Name, Config: cfg.HTTP, Logger: log, ErrorStyle: httpx.PlainText, OpenAPI: api.OpenAPI, AsyncAPI: asyncDoc,
		LargeBody: runapi.Streaming,
		Checks: []httpx.Check{
			{Name: "postgres", Fn: func(ctx context.Context) error { return pgdb.Ping(ctx, a.db) }},
			{Name: "nats", Fn: a.bus.Ping},
		},
	})
	if err != nil {
		return nil, err
	}
	a.workers = append(a.workers, a.server, service.WorkerFunc(func(ctx context.Context) error { return revoked.Follow(ctx, a.bus, log, 0) }))
	dbStats, err := pgdb.NewStatsCollector(ctx, a.db)
	if err != nil {
		return nil, err
	}
	err = a.server.Register(dbStats, outbox.NewLagCollector(a.db), a.bus.ConsumerCollector(), pgdb.NewJobQueueCollector(a.db, store.RunQueueQuery))
	if err != nil {
		return nil, err
	}
	// The relay publishes what every writer adds. Each commit of outbox rows (on any replica) is
	// heard by the listener and answered with passes (bus.CommitRelay), so run wake-ups and
	// events go out as their transactions commit; while the listener does not listen, a writer
	// kicks its relay instead, which then passes again 1, 2, 4 and 8 ms later.
	a.relay = outbox.NewRelay(a.db, a.bus, log, outbox.RelayConfig{BatchSize: relayBatch})
	commits := bus.NewCommitRelay(a.relay, relayBatch)
	// The hot reads (every capability check, board versions, library lists) are answered from
	// memory while the listener listens; it also tells of committed outbox rows.
	facts := cache.New(cfg.MembershipCacheEntries, cfg.LibraryCachePages)
	// The same listener wakes the event streams and the worker of a run that changed, on every
	// replica; while it does not listen, they read the database every changesPoll instead.
	changes := runwatch.New(changesPoll)
	listener, err := cache.NewListener(facts, cfg.DB.DSN, commits.Committed, changes, log, a.server.Registry)
	if err != nil {
		return nil, err
	}
	a.workers = append(a.workers, listener, commits, changes)
	orgs := store.NewOrgs(a.db)
	directory := cache.NewDirectory(facts, orgs)
	checker := access.NewChecker(directory)
	skills, syncer, err := a.newLibrary(ctx, cfg, checker, facts, log)
	if err != nil {
		return nil, err
	}
	writer := outbox.NewWriter(events.SourceAgentteam).Notify(func() {
		if !facts.Live() {
			a.relay.Kick()
		}
	})
	boardStore, seatStore := store.NewBoard(a.db, writer), store.NewSeats(a.db)
	boards := board.NewService(board.Deps{
		Store: cache.NewBoard(facts, boardStore), Structure: store.NewStructure(a.db), Versions: directory, Orgs: orgs, Seats: seatStore,
		Access: checker, NewID: service.NewID, Now: service.Now,
	})
	conns, mcp, err := connections(cfg, log, a.db, checker)
	if err != nil {
		return nil, err
	}
	runs := store.NewRuns(a.db, writer, orgCap(cfg))
	team := a.newMemory(cfg, checker, log, runs)
	if cfg.Runs.WorkerConcurrency > 0 {
		a.workers = append(a.workers, runWorker(cfg, log, a.db, a.bus, writer, conns, mcp, team, skills, changes)...)
	}
	if err = httpx.Mount(a.server.Echo, api.OpenAPI,
		httpx.Area{Policies: httpapi.Policies(), Mount: httpapi.Handler{}.Mount},
		httpx.Area{Policies: orgapi.Policies(verifier), Mount: orgapi.NewHandler(org.NewService(orgs, checker, service.NewID, service.Now), service.Now).Mount},
		httpx.Area{Policies: boardapi.Policies(verifier), Mount: boardapi.NewHandler(boards, seat.NewService(seatStore, checker, skills, conns, service.NewID, service.Now)).Mount},
		httpx.Area{Policies: runapi.Policies(verifier), Mount: runapi.NewHandler(run.NewService(runs, seatStore, boardStore, checker, service.NewID, service.Now), team, changes, cfg.Runs.EventStreams, log).Mount},
		httpx.Area{Policies: skillapi.Policies(verifier), Mount: skillapi.NewHandler(skills, syncer).Mount},
		httpx.Area{Policies: memoryapi.Policies(verifier), Mount: memoryapi.NewHandler(team).Mount},
		httpx.Area{Policies: connapi.Policies(verifier), Mount: connapi.NewHandler(conns).Mount},
	); err != nil {
		return nil, err
	}
	return a, nil
}

// Listen binds the HTTP address ahead of Run, so that a caller can read the port it got
// (tests listen on port 0).
func (a *App) Listen() (net.Addr, error) { return a.server.Listen() }

// Run serves HTTP, relays the outbox and runs the workers until ctx is done or one of them
// fails. On shutdown /readyz turns 503 at once and HTTP drains while the run worker stops
// fetching and finishes or gives back the runs it holds; the relay then makes a last pass
// over what they wrote, and Close closes the connections.
func (a *App) Run(ctx context.Context) error {
	return a.relay.Beside(ctx, func(ctx context.Context) error { return service.RunAll(ctx, a.workers...) })
}

// Close releases what New opened, in reverse order, and flushes the spans not yet exported.
func (a *App) Close() { a.closers.Close() }

// relayBatch is how many outbox rows one relay pass publishes at most.
const relayBatch = 100

// changesPoll is how often the event streams and the worker read a run again while the
// listener does not listen (and so cannot tell them of its changes).
const changesPoll = time.Second

// orgCap is RUN_ORG_CONCURRENCY, at least 1.
func orgCap(cfg config.Config) int { return max(cfg.Runs.OrgConcurrency, 1) }
