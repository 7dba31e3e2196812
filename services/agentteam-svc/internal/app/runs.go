package app

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"os"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/crypt"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/bus"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/mcpclient"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/modelclient"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/runner"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/runwatch"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

// devKeyLabel derives the development encryption key used when no encryption key is set.
const devKeyLabel = "motionstudio agentteam-svc development encryption key"

// sealer is the AES-256-GCM key ring for model keys and MCP headers: ENCRYPTION_KEYS or
// ENCRYPTION_KEY, or the fixed development key with a warning.
func sealer(cfg config.Config, log *slog.Logger) (*crypt.Ring, error) {
	return crypt.LoadRing(cfg.EncryptionKeys, cfg.EncryptionKey, func() ([]byte, error) {
		log.Warn("neither ENCRYPTION_KEYS nor ENCRYPTION_KEY is set: sealing secrets with the development key; set ENCRYPTION_KEYS in every deployment")
		key := sha256.Sum256([]byte(devKeyLabel))
		return key[:], nil
	})
}

// connections builds the model-connection and MCP-server service with its MCP client.
func connections(cfg config.Config, log *slog.Logger, db *gorm.DB, checker *access.Checker) (*connection.Service, *mcpclient.Client, error) {
	box, err := sealer(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	mcpOut := outbound.New(outbound.Options{
		Timeout: cfg.Runs.MCPTimeout, MaxBodyBytes: cfg.Runs.MCPMaxBodyBytes, AllowLoopback: cfg.OutboundAllowLoopback, UserAgent: Name,
		DNSServer: cfg.OutboundDNSServer,
	})
	mcp := mcpclient.New(mcpOut, cfg.Runs.MCPTimeout, cfg.Runs.MCPMaxBodyBytes, log)
	svc := connection.NewService(connection.Deps{
		Store: store.NewConnections(db), Access: checker, Sealer: box, Tools: mcp, NewID: service.NewID, Now: service.Now,
		CheckURL: func(raw string) error { return outbound.ValidateURL(raw, cfg.OutboundAllowLoopback) },
	})
	return svc, mcp, nil
}

// skillBriefs adapts the skill library to runner.Skills: every skill the agent names that
// resolves, ranked for the task.
type skillBriefs struct{ lib *library.Service }

func (s skillBriefs) Skills(ctx context.Context, organizationID string, keys []string, query string) ([]runner.SkillBrief, error) {
	briefs, err := s.lib.Skills(ctx, organizationID, keys, query, len(keys))
	if err != nil {
		return nil, err
	}
	out := make([]runner.SkillBrief, len(briefs))
	for i, b := range briefs {
		out[i] = runner.SkillBrief{Key: b.Key, Name: b.Name, Summary: b.Summary}
	}
	return out, nil
}

// runWorker builds the agent-run worker with team memory and the skill library, and returns
// the loops Run starts: the JetStream consumer of run wake-ups and the sweeper.
func runWorker(cfg config.Config, log *slog.Logger, db *gorm.DB, b *natsx.Bus, w *outbox.Writer, conns *connection.Service, mcp *mcpclient.Client,
	memory runner.Memory, skills *library.Service, changes *runwatch.Hub) []service.Worker {
	modelOut := outbound.New(outbound.Options{
		Timeout: cfg.Runs.ModelTimeout, MaxBodyBytes: 4 << 20, AllowLoopback: cfg.OutboundAllowLoopback, UserAgent: Name,
		DNSServer: cfg.OutboundDNSServer,
	})
	host, _ := os.Hostname()
	worker := runner.NewWorker(runner.Config{
		Lease: cfg.Runs.Lease, MaxAttempts: cfg.Runs.MaxAttempts, QueuedLimit: cfg.Runs.QueuedLimit, StaleAfter: cfg.Runs.StaleAfter,
		Retry: runner.Retry{Retries: cfg.Runs.ModelRetries, Base: cfg.Runs.ModelRetryBase, Max: cfg.Runs.ModelRetryMax},
		Limits: runner.Limits{
			Steps: cfg.Runs.MaxSteps, ToolCalls: cfg.Runs.MaxToolCalls, Duration: cfg.Runs.MaxDuration, Tokens: cfg.Runs.MaxTokens,
			ResultBytes: cfg.Runs.ToolResultMaxBytes,
		},
	}, runner.Deps{
		Store: store.NewRunWork(db, w, orgCap(cfg)), Connections: conns, Changes: changes,
		Model: modelclient.New(modelOut), Tools: mcp, Memory: memory, Skills: skillBriefs{lib: skills}, Log: log.With("component", "run_worker"), Now: service.Now,
		Owner: host + "/" + service.NewID(),
	})
	return []service.Worker{
		service.WorkerFunc(func(ctx context.Context) error {
			return bus.RunAgentRunWorker(ctx, b, worker, cfg.Runs.WorkerConcurrency)
		}),
		service.WorkerFunc(func(ctx context.Context) error { return worker.RunSweeper(ctx, cfg.Runs.SweepInterval) }),
	}
}
