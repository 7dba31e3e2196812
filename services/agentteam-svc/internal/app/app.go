// Package app is agentteam-svc's composition root: it wires configuration, infrastructure,
// domain services and the HTTP adapter, and runs them.
package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/motionstudio/platform/pkg/core"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/service"
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

// App is a running agent-team service: its core (pkg/core) and the workers it adds, the
// cache's listener, the relay passes on commit, the shared skill source's syncer, team memory's
// change notices and, when it is on, the agent-run worker's consumer and sweeper.
type App struct{ *core.Core }

// Migrate applies the outbox's and the service's migrations.
func Migrate(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	return core.Migrate(ctx, cfg.DB, log, store.Migrations)
}

// New connects to every dependency and builds the service. The caller must Close it.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (_ *App, err error) {
	c, err := core.Open(ctx, core.Options{
		Service: Name, HTTP: cfg.HTTP, DB: cfg.DB, NATS: cfg.NATS, Streams: []string{events.StreamAgentteamEvents, events.StreamJobs},
		OpenAPI: api.OpenAPI, ErrorStyle: httpx.PlainText, LargeBody: runapi.Streaming, JobQueue: store.RunQueueQuery,
		Relay: outbox.RelayConfig{BatchSize: relayBatch}, Auth: &cfg.Auth,
	}, log)
	if err != nil {
		return nil, err
	}
	a := &App{Core: c}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	// The relay publishes what every writer adds. Each commit of outbox rows (on any replica) is
	// heard by the listener and answered with passes (bus.CommitRelay), so run wake-ups and
	// events go out as their transactions commit; while the listener does not listen, a writer
	// kicks its relay instead, which then passes again 1, 2, 4 and 8 ms later.
	commits := bus.NewCommitRelay(a.Relay, relayBatch)
	// The hot reads (every capability check, board versions, library lists) are answered from
	// memory while the listener listens; it also tells of committed outbox rows.
	facts := cache.New(cfg.MembershipCacheEntries, cfg.LibraryCachePages)
	// The same listener wakes the event streams and the worker of a run that changed, on every
	// replica; while it does not listen, they read the database every changesPoll instead.
	changes := runwatch.New(changesPoll)
	listener, err := cache.NewListener(facts, cfg.DB.DSN, commits.Committed, changes, log, a.Server.Registry)
	if err != nil {
		return nil, err
	}
	a.Workers = append(a.Workers, listener, commits, changes)
	orgs := store.NewOrgs(a.DB)
	directory := cache.NewDirectory(facts, orgs)
	checker := access.NewChecker(directory)
	skills, syncer, err := a.newLibrary(ctx, cfg, checker, facts, log)
	if err != nil {
		return nil, err
	}
	writer := outbox.NewWriter(events.SourceAgentteam).Notify(func() {
		if !facts.Live() {
			a.Relay.Kick()
		}
	})
	boardStore, seatStore := store.NewBoard(a.DB, writer), store.NewSeats(a.DB)
	boards := board.NewService(board.Deps{
		Store: cache.NewBoard(facts, boardStore), Structure: store.NewStructure(a.DB), Versions: directory, Orgs: orgs, Seats: seatStore,
		Access: checker, NewID: service.NewID, Now: service.Now,
	})
	conns, mcp, err := connections(cfg, log, a.DB, checker)
	if err != nil {
		return nil, err
	}
	runs := store.NewRuns(a.DB, writer, orgCap(cfg))
	team := a.newMemory(cfg, checker, log, runs)
	if cfg.Runs.WorkerConcurrency > 0 {
		a.Workers = append(a.Workers, runWorker(cfg, log, a.DB, a.Bus, writer, conns, mcp, team, skills, changes)...)
	}
	if err = httpx.Mount(a.Server.Echo, api.OpenAPI,
		httpx.Area{Policies: httpapi.Policies(), Mount: httpapi.Handler{}.Mount},
		httpx.Area{Policies: orgapi.Policies(a.Verifier), Mount: orgapi.NewHandler(org.NewService(orgs, checker, service.NewID, service.Now), service.Now).Mount},
		httpx.Area{Policies: boardapi.Policies(a.Verifier), Mount: boardapi.NewHandler(boards, seat.NewService(seatStore, checker, skills, conns, service.NewID, service.Now)).Mount},
		httpx.Area{Policies: runapi.Policies(a.Verifier), Mount: runapi.NewHandler(run.NewService(runs, seatStore, boardStore, checker, service.NewID, service.Now), team, changes, cfg.Runs.EventStreams, log).Mount},
		httpx.Area{Policies: skillapi.Policies(a.Verifier), Mount: skillapi.NewHandler(skills, syncer).Mount},
		httpx.Area{Policies: memoryapi.Policies(a.Verifier), Mount: memoryapi.NewHandler(team).Mount},
		httpx.Area{Policies: connapi.Policies(a.Verifier), Mount: connapi.NewHandler(conns).Mount},
	); err != nil {
		return nil, err
	}
	return a, nil
}

// relayBatch is how many outbox rows one relay pass publishes at most.
const relayBatch = 100

// changesPoll is how often the event streams and the worker read a run again while the
// listener does not listen (and so cannot tell them of its changes).
const changesPoll = time.Second

// orgCap is RUN_ORG_CONCURRENCY, at least 1.
func orgCap(cfg config.Config) int { return max(cfg.Runs.OrgConcurrency, 1) }
