package app

import (
	"context"
	"log/slog"

	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/bus"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/openaiembed"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

// embeddingsMaxBody caps an embeddings answer: 64 vectors of 384 numbers as JSON.
const embeddingsMaxBody = 8 << 20

// newEmbedder is the embedder configuration selects: the OpenAI-compatible endpoint when one is
// configured, else the built-in local embedder.
func newEmbedder(cfg config.Config) embed.Embedder {
	client := outbound.New(outbound.Options{AllowLoopback: cfg.OutboundAllowLoopback, MaxBodyBytes: embeddingsMaxBody, UserAgent: Name})
	return openaiembed.Select(openaiembed.Config{
		BaseURL: cfg.Embeddings.BaseURL, Model: cfg.Embeddings.Model, APIKey: cfg.Embeddings.APIKey,
	}, client.HTTPClient())
}

// newMemory builds team memory with its in-memory index (runs records decisions on tool calls
// and wakes the runs they resume), and adds to a's workers the listener of the change notices
// that keep the replicas' indexes current.
func (a *App) newMemory(cfg config.Config, checker *access.Checker, log *slog.Logger, runs *store.Runs) *memory.Service {
	st := store.NewMemory(a.DB)
	notices := bus.NewMemoryNotices(a.Bus, log)
	svc := memory.NewService(memory.Deps{
		Store:     st,
		Runs:      runs,
		Calls:     runs,
		Analytics: st,
		Access:    checker,
		Embedder:  newEmbedder(cfg),
		Index:     memory.NewIndex(st, memory.IndexLimits{MaxTeams: cfg.MemoryIndex.MaxTeams, MaxEntries: cfg.MemoryIndex.MaxEntries}),
		Notifier:  notices,
		NewID:     service.NewID,
		Now:       service.Now,
	})
	a.Workers = append(a.Workers, service.WorkerFunc(func(ctx context.Context) error { return notices.Listen(ctx, svc) }))
	return svc
}
