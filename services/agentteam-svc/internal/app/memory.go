package app

import (
	"log/slog"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/pkg/outbox"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/bus"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed/openaiembed"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
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

// newMemory builds team memory with its in-memory index and the change notices that keep the
// replicas' indexes current.
func newMemory(cfg config.Config, db *gorm.DB, b *natsx.Bus, checker *access.Checker, log *slog.Logger) (*memory.Service, *bus.MemoryNotices) {
	st := store.NewMemory(db)
	notices := bus.NewMemoryNotices(b, log)
	svc := memory.NewService(memory.Deps{
		Store:     st,
		Runs:      store.NewRuns(db, outbox.NewWriter(events.SourceAgentteam)),
		Analytics: st,
		Access:    checker,
		Embedder:  newEmbedder(cfg),
		Index:     memory.NewIndex(st, memory.IndexLimits{MaxTeams: cfg.MemoryIndex.MaxTeams, MaxEntries: cfg.MemoryIndex.MaxEntries}),
		Notifier:  notices,
		NewID:     newID,
		Now:       now,
	})
	return svc, notices
}
