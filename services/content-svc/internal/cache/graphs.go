package cache

import (
	"context"

	"github.com/motionstudio/platform/pkg/bounded"
	"github.com/motionstudio/platform/services/content-svc/internal/editor"
)

// GraphRecords bounds the editor graphs a Graphs keeps, counted in records (a project, each
// scene, element, shared layer and color, controller, preset and preset story; some 300 bytes
// each in memory): 100,000 records are about 30 MiB, a hundred 50 × 20 graphs.
const GraphRecords = 100_000

// Graphs is an editor.Store whose ProjectFull answers a project's whole graph from memory while
// the editor version is the one it was read at. Every read still asks the store for the
// version (GraphVersion, one query that also decides whether the caller may read the project),
// and triggers bump the version on every write to any graph (migration 00036), so a kept graph
// is never answered after a write on any replica. Safe for concurrent use.
type Graphs struct {
	editor.Store
	graphs *bounded.Map[string, editor.ProjectFull]
}

// NewGraphs returns Graphs over s keeping at most maxRecords records (GraphRecords); 0 keeps
// none.
func NewGraphs(s editor.Store, maxRecords int) *Graphs {
	return &Graphs{Store: s, graphs: bounded.New(bounded.Options[string, editor.ProjectFull]{
		Max: maxRecords, Size: func(_ string, g editor.ProjectFull) int { return records(g) },
	})}
}

// ProjectFull answers the project's graph (editor.Store). The graph is shared with every other
// reader and must not be written.
func (g *Graphs) ProjectFull(ctx context.Context, projectID string, privileged bool) (editor.ProjectFull, error) {
	version, err := g.Store.GraphVersion(ctx, projectID, privileged)
	if err != nil {
		return editor.ProjectFull{}, err
	}
	if full, ok := g.graphs.Get(projectID); ok && full.Version == version {
		return full, nil
	}
	// The graph carries the version of its own snapshot, which later reads compare.
	full, err := g.Store.ProjectFull(ctx, projectID, privileged)
	if err == nil {
		g.graphs.Put(projectID, full)
	}
	return full, err
}

// records counts a graph's records, its share of the bound.
func records(g editor.ProjectFull) int {
	n := 1 + len(g.Scenes) + len(g.SharedColors) + len(g.SharedLayers) + len(g.CharacterControllers) +
		len(g.CharacterPresets) + len(g.PresetStories)
	for _, s := range g.Scenes {
		n += len(s.Contents) + len(s.Colors) + len(s.Characters) + len(s.Repeaters)
	}
	return n
}
