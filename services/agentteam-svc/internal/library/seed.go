package library

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
)

//go:embed profiles/*.md
var profileFiles embed.FS

// SeedProfiles stores the free shared agent profiles (product owner, QA, backend) whose
// identity is still free; it never replaces one, so replicas starting together seed them once.
func (s *Service) SeedProfiles(ctx context.Context) error {
	names, err := fs.Glob(profileFiles, "profiles/*.md")
	if err != nil {
		return err
	}
	items := make([]Item, 0, len(names))
	now := s.d.Now()
	for _, name := range names {
		raw, err := profileFiles.ReadFile(name)
		if err != nil {
			return err
		}
		it, err := Parse(string(raw), Source{Repo: "builtin", Path: name})
		if err != nil {
			return fmt.Errorf("library: seed profile %s: %w", name, err)
		}
		it.ID, it.Kind, it.Origin, it.CreatedAt, it.UpdatedAt = s.d.NewID(), AgentProfile, Builtin, now, now
		s.prepare(ctx, &it)
		items = append(items, it)
	}
	return s.d.Store.SeedShared(ctx, items)
}
