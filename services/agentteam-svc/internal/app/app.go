// Package app is agentteam-svc's composition root: it wires configuration, infrastructure,
// domain services and the HTTP adapter, and runs them.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"time"

	"github.com/google/uuid"

	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/pglisten"
	"github.com/motionstudio/platform/pkg/revocation"
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
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
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
	// listener keeps the in-memory roles, board versions and library stamps fresh, and signals
	// committed on each commit of outbox rows.
	listener  *pglisten.Listener
	committed chan struct{}
	// followRevocations keeps the verifier's deny list of identity's revoked sessions.
	followRevocations func(ctx context.Context) error
	syncer            *library.Syncer
	// syncAtStart is set when a shared skill source is configured.
	syncAtStart bool

	memory        *memory.Service
	memoryNotices *bus.MemoryNotices
	// workers are the agent-run worker's loops (consumer and sweeper), when it is on.
	workers []func(ctx context.Context) error
	log     *slog.Logger
	// stopTracing flushes and stops the trace pipeline telemetry.Setup installed.
	stopTracing func(context.Context) error
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
	a := &App{log: log}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.stopTracing, err = telemetry.Setup(ctx, Name); err != nil {
		return nil, err
	}
	if a.db, err = pgdb.Open(ctx, cfg.DB); err != nil {
		return nil, err
	}
	if a.bus, err = natsx.Connect(ctx, cfg.NATS, Name, log); err != nil {
		return nil, err
	}
	if err = ensureStreams(ctx, a.bus, events.StreamAgentteamEvents, events.StreamJobs); err != nil {
		return nil, err
	}
	revoked := revocation.NewDenyList()
	verifier, err := authn.NewVerifier(ctx, authn.VerifierConfig{JWKSURL: cfg.Auth.JWKSURL, Issuer: cfg.Auth.Issuer,
		Audience: cfg.Auth.Audience, RefreshInterval: cfg.Auth.JWKSRefresh, Revocations: revoked})
	if err != nil {
		return nil, err
	}
	a.followRevocations = func(ctx context.Context) error { return revoked.Follow(ctx, a.bus, log, 0) }
	asyncDoc, ok := events.AsyncAPI(events.ServiceAgentteam)
	if !ok {
		return nil, fmt.Errorf("app: no AsyncAPI document for %s", Name)
	}
	a.server, err = httpx.New(httpx.Options{
		Service: Name, Config: cfg.HTTP, Logger: log, ErrorStyle: httpx.PlainText, OpenAPI: api.OpenAPI, AsyncAPI: asyncDoc,
		Checks: []httpx.Check{
			{Name: "postgres", Fn: func(ctx context.Context) error { return pgdb.Ping(ctx, a.db) }},
			{Name: "nats", Fn: a.bus.Ping},
		},
	})
	if err != nil {
		return nil, err
	}
	dbStats, err := pgdb.NewStatsCollector(ctx, a.db)
	if err != nil {
		return nil, err
	}
	err = a.server.Register(dbStats, outbox.NewLagCollector(a.db), a.bus.ConsumerCollector(), pgdb.NewJobQueueCollector(a.db, store.RunQueueQuery))
	if err != nil {
		return nil, err
	}
	// The hot reads (every capability check, board versions, library stamps) are answered from
	// memory while the listener listens; it also tells of committed outbox rows.
	facts := cache.New(cache.DefaultMaxEntries)
	a.committed = make(chan struct{}, 1)
	notice := func() {
		select {
		case a.committed <- struct{}{}:
		default:
		}
	}
	if a.listener, err = cache.NewListener(facts, cfg.DB.DSN, notice, log, a.server.Registry); err != nil {
		return nil, err
	}
	orgs := store.NewOrgs(a.db)
	directory := cache.NewDirectory(facts, orgs)
	checker := access.NewChecker(directory)
	orgHandler := orgapi.NewHandler(org.NewService(orgs, checker, newID, now), now)
	skills, err := a.newLibrary(ctx, cfg, checker, facts, log)
	if err != nil {
		return nil, err
	}
	skillHandler := skillapi.NewHandler(skills, a.syncer)
	// The relay publishes what every writer adds. Each commit of outbox rows (on any replica) is
	// heard by the listener and answered with a pass (relayOnCommit), so run wake-ups and events
	// go out as their transactions commit; while the listener does not listen, a writer kicks
	// its relay instead, which then passes again 1, 2, 4 and 8 ms later.
	a.relay = outbox.NewRelay(a.db, a.bus, log, outbox.RelayConfig{BatchSize: relayBatch})
	writer := outbox.NewWriter(events.SourceAgentteam).Notify(func() {
		if !facts.Live() {
			a.relay.Kick()
		}
	})
	boardStore, seatStore := store.NewBoard(a.db, writer), store.NewSeats(a.db)
	boards := board.NewService(board.Deps{
		Store: cache.NewBoard(facts, boardStore), Structure: store.NewStructure(a.db), Versions: directory, Orgs: orgs, Seats: seatStore,
		Access: checker, NewID: newID, Now: now,
	})
	conns, mcp, err := connections(cfg, log, a.db, checker)
	if err != nil {
		return nil, err
	}
	boardHandler := boardapi.NewHandler(boards, seat.NewService(seatStore, checker, skills, conns, newID, now))
	runHandler := runapi.NewHandler(run.NewService(store.NewRuns(a.db, writer), seatStore, boardStore, checker, newID, now))
	a.memory, a.memoryNotices = newMemory(cfg, a.db, a.bus, checker, log)
	if cfg.Runs.WorkerConcurrency > 0 {
		a.workers = runWorker(cfg, log, a.db, a.bus, writer, conns, mcp, a.memory, skills)
	}
	connHandler := connapi.NewHandler(conns)
	err = httpapi.Mount(a.server.Echo,
		httpapi.Area{Policies: orgapi.Policies(verifier), Register: orgHandler.Register},
		httpapi.Area{Policies: boardapi.Policies(verifier), Register: boardHandler.Register},
		httpapi.Area{Policies: runapi.Policies(verifier), Register: runHandler.Register},
		httpapi.Area{Policies: skillapi.Policies(verifier), Register: skillHandler.Register},
		httpapi.Area{Policies: memoryapi.Policies(verifier), Register: memoryapi.NewHandler(a.memory).Register},
		httpapi.Area{Policies: connapi.Policies(verifier), Register: connHandler.Register},
	)
	if err != nil {
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
	return a.relay.Beside(ctx, func(ctx context.Context) error {
		g, ctx := errgroup.WithContext(ctx)
		g.Go(func() error { return a.server.Run(ctx) })
		g.Go(func() error { return a.listener.Run(ctx) })
		g.Go(func() error { return relayOnCommit(ctx, a.relay, a.committed) })
		g.Go(func() error { return a.followRevocations(ctx) })
		g.Go(func() error { return a.syncer.Run(ctx) })
		for _, w := range a.workers {
			g.Go(func() error { return w(ctx) })
		}
		if a.syncAtStart {
			a.syncer.Trigger()
		}
		g.Go(func() error { return a.memoryNotices.Listen(ctx, a.memory) })
		return g.Wait()
	})
}

// Close releases every connection New opened and flushes the spans not yet exported.
func (a *App) Close() {
	if a.bus != nil {
		a.bus.Close()
	}
	if a.db != nil {
		_ = pgdb.Close(a.db)
	}
	if a.stopTracing != nil {
		telemetry.Stop(a.stopTracing, a.log)
	}
}

// relayBatch is how many outbox rows one relay pass publishes at most.
const relayBatch = 100

// relayOnCommit makes relay passes each time outbox rows were committed (notices that arrive
// during a pass make one more), until a pass publishes less than a full batch. A failing pass
// is left to the relay's own loop, which logs it and retries with backoff.
func relayOnCommit(ctx context.Context, relay *outbox.Relay, committed <-chan struct{}) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-committed:
		}
		for {
			n, err := relay.Flush(ctx)
			if err != nil || n < relayBatch {
				break
			}
		}
	}
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

func now() time.Time { return time.Now().UTC() }

// ensureStreams creates or updates the named streams of the event catalogue, the ones this
// service publishes into, under the retention limits and replicas of the NATS configuration.
func ensureStreams(ctx context.Context, bus *natsx.Bus, names ...string) error {
	for _, s := range events.Streams() {
		if slices.Contains(names, s.Name) {
			if err := bus.EnsureStream(ctx, bus.StreamSpec(s.Name, s.Subjects, s.Jobs)); err != nil {
				return err
			}
		}
	}
	return nil
}
