// Package memory is a team's memory: notes, approvals and corrections of agent output, each
// embedded into a vector so a search (or a run's prompt assembly) finds the entries most like a
// query. Approving a completed run stores its output as an Approval, or the edited text as a
// Correction with the edit distance; analytics summarise those reviews per agent. A person's
// decision on a tool call that waits for one is remembered too (an Approval or a Correction
// naming the call and the note, tied to no run, so analytics do not count it as a review).
package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/run"
)

// Kind is what a memory entry records.
type Kind string

// The kinds of entries.
const (
	Approval   Kind = "Approval"
	Correction Kind = "Correction"
	Note       Kind = "Note"
)

// Valid reports whether k is one of the kinds.
func (k Kind) Valid() bool { return k == Approval || k == Correction || k == Note }

// Entry is one item of a team's memory.
type Entry struct {
	ID             string
	OrganizationID string
	TeamID         string
	Kind           Kind
	Content        string
	// RunID and AgentID name the approved run and its agent (approvals and corrections).
	RunID   *string
	AgentID *string
	// EditDistance is set on corrections made by approving a run with an edited output.
	EditDistance *int
	// CreatedBy is the member who wrote or approved it.
	CreatedBy string
	CreatedAt time.Time
}

// Hit is a search result: an entry and its cosine similarity to the query.
type Hit struct {
	Entry Entry
	Score float32
}

// Search limits.
const (
	DefaultSearchLimit = 10
	MaxSearchLimit     = 50
	// QueryMax is the longest search query, in characters.
	QueryMax = 2000
)

// Store persists memory entries. Each mutation bumps the team's memory version and writes its
// audit entry in the same transaction.
type Store interface {
	IndexSource
	// Create inserts the entry with its vector and returns the team's new memory version. A
	// Conflict error means the entry's run was approved already.
	Create(ctx context.Context, e Entry, v Vector, a audit.Entry) (int64, error)
	// Entry returns EntryNotFound for an unknown or deleted id.
	Entry(ctx context.Context, id string) (Entry, error)
	// Entries lists the team's entries, newest first.
	Entries(ctx context.Context, teamID string, p org.Page) ([]Entry, error)
	// EntriesByID returns the live entries among ids, in no particular order.
	EntriesByID(ctx context.Context, ids []string) ([]Entry, error)
	// Delete removes the entry (its content and vector are erased) and returns the team's new
	// memory version; EntryNotFound when it is already gone.
	Delete(ctx context.Context, id string, a audit.Entry) (int64, error)
}

// Runs reads agent runs.
type Runs interface {
	// Run returns run.NotFound for an unknown id.
	Run(ctx context.Context, id string) (run.Run, error)
}

// Notifier tells the other replicas that a team's memory reached a version; delivery is best
// effort (the version check before every search heals a lost notice).
type Notifier interface {
	Changed(ctx context.Context, teamID string, version int64)
}

// Service implements team memory.
type Service struct {
	store     Store
	runs      Runs
	calls     Calls
	analytics AnalyticsStore
	access    *access.Checker
	embedder  embed.Embedder
	index     *Index
	notifier  Notifier
	newID     func() string
	now       func() time.Time
}

// Deps are what a Service needs.
type Deps struct {
	Store Store
	Runs  Runs
	// Calls records decisions on tool calls waiting for a person.
	Calls Calls
	// Analytics computes governance figures.
	Analytics AnalyticsStore
	Access    *access.Checker
	Embedder  embed.Embedder
	Index     *Index
	Notifier  Notifier
	NewID     func() string
	Now       func() time.Time
}

// NewService returns a Service.
func NewService(d Deps) *Service {
	return &Service{store: d.Store, runs: d.Runs, calls: d.Calls, analytics: d.Analytics, access: d.Access, embedder: d.Embedder, index: d.Index,
		notifier: d.Notifier, newID: d.NewID, now: d.Now}
}

// EntryNotFound is the 404 for an unknown memory entry.
func EntryNotFound() error {
	return apperr.E(apperr.NotFound, "memory_entry_not_found", "Memory entry not found.")
}

// Create writes an entry into the team's memory (WorkTasks on the team). It returns Invalid for
// an unknown kind or a blank, oversized or malformed content, TeamNotFound, Forbidden, and
// Unavailable when a remote embedder fails.
func (s *Service) Create(ctx context.Context, memberID, teamID string, kind Kind, content string) (Entry, error) {
	if !kind.Valid() {
		return Entry{}, apperr.Invalidf("Kind must be Approval, Correction or Note.")
	}
	var c check.Checker
	c.AddIf(check.Blank(content), "Content", "is required")
	c.Text("Content", &content, check.TextMax)
	if err := c.First(); err != nil {
		return Entry{}, err
	}
	orgID, err := s.access.Require(ctx, memberID, access.WorkTasks, access.Team(teamID))
	if err != nil {
		return Entry{}, err
	}
	e := Entry{ID: s.newID(), OrganizationID: orgID, TeamID: teamID, Kind: kind, Content: content, CreatedBy: memberID, CreatedAt: s.now()}
	return e, s.insert(ctx, e, audit.New(orgID, memberID, "memory.created", "MemoryEntry", e.ID, string(kind)))
}

// insert embeds and stores e, then tells the other replicas.
func (s *Service) insert(ctx context.Context, e Entry, a audit.Entry) error {
	vecs, err := s.embedder.Embed(ctx, []string{e.Content})
	if err != nil {
		return err
	}
	a.CreatedAt = e.CreatedAt
	version, err := s.store.Create(ctx, e, Vector{EntryID: e.ID, Embedder: s.embedder.ID(), Values: vecs[0]}, a)
	if err != nil {
		return err
	}
	s.notifier.Changed(ctx, e.TeamID, version)
	return nil
}

// List answers the team's entries, newest first (ViewBoard on the team).
func (s *Service) List(ctx context.Context, memberID, teamID string, p org.Page) ([]Entry, error) {
	if _, err := s.access.Require(ctx, memberID, access.ViewBoard, access.Team(teamID)); err != nil {
		return nil, err
	}
	return s.store.Entries(ctx, teamID, p)
}

// Delete removes an entry (WorkTasks on its team) and returns it as it was. It returns
// EntryNotFound and Forbidden.
func (s *Service) Delete(ctx context.Context, memberID, id string) (Entry, error) {
	e, err := s.store.Entry(ctx, id)
	if err != nil {
		return Entry{}, err
	}
	orgID, err := s.access.Require(ctx, memberID, access.WorkTasks, access.Team(e.TeamID))
	if err != nil {
		return Entry{}, err
	}
	a := audit.New(orgID, memberID, "memory.deleted", "MemoryEntry", id, string(e.Kind))
	a.CreatedAt = s.now()
	version, err := s.store.Delete(ctx, id, a)
	if err != nil {
		return Entry{}, err
	}
	s.notifier.Changed(ctx, e.TeamID, version)
	return e, nil
}

// Search ranks the team's entries by cosine similarity to q (ViewBoard on the team). It returns Invalid for a blank or oversized query or a limit out of
// 1..MaxSearchLimit, TeamNotFound, Forbidden, and Unavailable when a remote embedder fails.
func (s *Service) Search(ctx context.Context, memberID, teamID, q string, limit int) ([]Hit, error) {
	if limit < 1 || limit > MaxSearchLimit {
		return nil, apperr.Invalidf("limit must be between 1 and %d.", MaxSearchLimit)
	}
	var c check.Checker
	c.AddIf(check.Blank(q), "q", "is required")
	c.Text("q", &q, QueryMax)
	if err := c.First(); err != nil {
		return nil, err
	}
	if _, err := s.access.Require(ctx, memberID, access.ViewBoard, access.Team(teamID)); err != nil {
		return nil, err
	}
	return s.rank(ctx, teamID, q, limit)
}

// Recall returns the contents of the team's k entries most relevant to query, best first, for a
// run's prompt assembly (no member check: the worker acts for the team). An empty query or a
// team without memory answers nothing.
func (s *Service) Recall(ctx context.Context, teamID, query string, k int) ([]string, error) {
	if check.Blank(query) || k <= 0 {
		return nil, nil
	}
	hits, err := s.rank(ctx, teamID, query, k)
	if err != nil {
		return nil, fmt.Errorf("memory: recall for team %s: %w", teamID, err)
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Entry.Content
	}
	return out, nil
}

// rank embeds the query with the current embedder and ranks the team's vectors of that
// embedder only.
func (s *Service) rank(ctx context.Context, teamID, q string, k int) ([]Hit, error) {
	vecs, err := s.embedder.Embed(ctx, []string{q})
	if err != nil {
		return nil, err
	}
	scored, err := s.index.Search(ctx, teamID, s.embedder.ID(), vecs[0], k)
	if err != nil || len(scored) == 0 {
		return nil, err
	}
	ids := make([]string, len(scored))
	for i, sc := range scored {
		ids[i] = sc.EntryID
	}
	entries, err := s.store.EntriesByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]Entry, len(entries))
	for _, e := range entries {
		byID[e.ID] = e
	}
	hits := make([]Hit, 0, len(scored))
	for _, sc := range scored {
		if e, ok := byID[sc.EntryID]; ok {
			hits = append(hits, Hit{Entry: e, Score: sc.Score})
		}
	}
	return hits, nil
}

// RefreshTeam brings the index's copy of the team up to version (a change notice from a
// replica).
func (s *Service) RefreshTeam(ctx context.Context, teamID string, version int64) error {
	return s.index.Refresh(ctx, teamID, version)
}
