package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/cache"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/gitsource"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

// newLibrary builds the skill and profile library over the configured shared source, seeds
// the free shared agent profiles and adds the debounced re-sync to a's workers, with a first
// sync at start when a shared source is configured.
func (a *App) newLibrary(ctx context.Context, cfg config.Config, checker *access.Checker, facts *cache.Facts, log *slog.Logger) (*library.Service, *library.Syncer, error) {
	src, err := skillSource(cfg.SkillSource)
	if err != nil {
		return nil, nil, err
	}
	lib := library.NewService(library.Deps{
		Store: cache.NewLibrary(facts, store.NewLibrary(a.DB)), Access: checker, Embedder: newEmbedder(cfg), Products: productIdentities{store.NewStructure(a.DB)}, Source: src,
		AdminKey: cfg.SkillsAdminKey, HookSecret: cfg.SkillSource.WebhookSecret, NewID: service.NewID, Now: service.Now, Log: log,
	})
	if err := lib.SeedProfiles(ctx); err != nil {
		return nil, nil, err
	}
	syncer := library.NewSyncer(lib, cfg.SkillSource.SyncDebounce, func(_ library.SyncResult, err error) {
		if err != nil {
			log.ErrorContext(ctx, "shared skill source sync failed", "error", err)
		}
	})
	if src != nil {
		syncer.Trigger()
	}
	a.Workers = append(a.Workers, syncer)
	return lib, syncer, nil
}

// skillSource is the configured shared skill source: a directory, a Git repository, or none.
func skillSource(cfg config.SkillSource) (library.SourceReader, error) {
	switch {
	case cfg.Dir != "" && cfg.GitURL != "":
		return nil, errors.New("app: set SKILLS_SOURCE_DIR or SKILLS_SOURCE_GIT_URL, not both")
	case cfg.Dir != "":
		return gitsource.Dir{Root: cfg.Dir}, nil
	case cfg.GitURL != "":
		return gitsource.NewGit(cfg.GitURL, cfg.GitBranch, cfg.GitCache)
	}
	return nil, nil
}

// productIdentities lets a product profile set the identity of a product of the organization
// through the structure store.
type productIdentities struct{ st *store.Structure }

// SetIdentity returns NotFound (Product not found.) for a product outside the organization.
func (p productIdentities) SetIdentity(ctx context.Context, organizationID, productID, identity string, e audit.Entry) error {
	prod, err := p.st.Product(ctx, productID)
	if apperr.Is(err, apperr.NotFound) || (err == nil && prod.OrganizationID != organizationID) {
		return apperr.E(apperr.NotFound, "product_not_found", "Product not found.")
	}
	if err != nil {
		return err
	}
	_, err = p.st.SetProductIdentity(ctx, productID, identity, e)
	return err
}
