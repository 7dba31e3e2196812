package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

// SeedMemoryCommand is the seed-memory subcommand, `seed-memory [-entries N] [-member UUID]`:
// it migrates, seeds and prints MEMORY_ORG_ID, MEMORY_TEAM_ID, MEMORY_MEMBER_ID and
// MEMORY_ENTRIES to stdout for a shell to eval.
func SeedMemoryCommand(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("seed-memory", flag.ContinueOnError)
	entries := fs.Int("entries", 10000, "memory entries to seed")
	member := fs.String("member", "", "member id of the organization's Owner (default: a new id)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := Migrate(ctx, cfg, log); err != nil {
		return err
	}
	s, err := SeedMemory(ctx, cfg, *entries, *member)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "MEMORY_ORG_ID=%s\nMEMORY_TEAM_ID=%s\nMEMORY_MEMBER_ID=%s\nMEMORY_ENTRIES=%d\n",
		s.OrganizationID, s.TeamID, s.MemberID, s.Entries)
	return err
}

// MemorySeed names what SeedMemory created.
type MemorySeed struct {
	OrganizationID string
	TeamID         string
	// MemberID is the organization's Owner: a token for it may search the team.
	MemberID string
	Entries  int
}

// seedWords make the seeded notes: enough vocabulary that queries rank them differently.
var seedWords = strings.Fields(`deploy release rollback migration database index query cache
	latency outage incident billing invoice refund customer onboarding login session token password
	reset email notification webhook retry queue worker lease timeout budget model prompt review
	approval correction design palette typography layout landing page pricing plan quota limit
	backup restore archive audit compliance privacy export import search ranking memory vector
	embedding skill agent persona team board task handoff sprint estimate roadmap feature flag
	experiment metric dashboard alert on-call runbook postmortem security secret rotation tls
	certificate dns load balancer kubernetes helm chart container image registry build pipeline`)

// SeedMemory creates an organization owned by memberID (a new id when empty), a team in it and
// n notes of generated text in the team's memory, embedded by the configured embedder, for the
// memory-search benchmark. It writes through the stores, so versions and audit rows are real.
func SeedMemory(ctx context.Context, cfg config.Config, n int, memberID string) (MemorySeed, error) {
	db, err := pgdb.Open(ctx, cfg.DB)
	if err != nil {
		return MemorySeed{}, err
	}
	defer pgdb.Close(db)
	if memberID == "" {
		memberID = service.NewID()
	}
	seed := MemorySeed{OrganizationID: service.NewID(), TeamID: service.NewID(), MemberID: memberID}
	at := service.Now()
	o := org.Organization{ID: seed.OrganizationID, Name: "Memory bench", CreatedAt: at}
	owner := org.Membership{OrganizationID: o.ID, MemberID: memberID, Role: access.Owner, CreatedAt: at}
	if err := store.NewOrgs(db).CreateOrganization(ctx, o, owner, audit.New(o.ID, memberID, "organization.created", "Organization", o.ID, o.Name)); err != nil {
		return seed, fmt.Errorf("seed memory: organization: %w", err)
	}
	t := board.Team{ID: seed.TeamID, OrganizationID: o.ID, Name: "Memory bench", CreatedAt: at}
	if err := store.NewStructure(db).CreateTeam(ctx, t, audit.New(o.ID, memberID, "team.created", "Team", t.ID, t.Name)); err != nil {
		return seed, fmt.Errorf("seed memory: team: %w", err)
	}
	embedder, mem := newEmbedder(cfg), store.NewMemory(db)
	r := rand.New(rand.NewPCG(42, uint64(n))) // #nosec G404 G115 -- demo data is meant to be reproducible from a fixed seed; n is a positive count
	const batch = 64
	for start := 0; start < n; start += batch {
		texts := make([]string, min(batch, n-start))
		for i := range texts {
			texts[i] = seedNote(r, start+i)
		}
		vecs, err := embedder.Embed(ctx, texts)
		if err != nil {
			return seed, fmt.Errorf("seed memory: embed: %w", err)
		}
		entries, vectors, audits := make([]memory.Entry, len(texts)), make([]memory.Vector, len(texts)), make([]audit.Entry, len(texts))
		for i, text := range texts {
			e := memory.Entry{ID: service.NewID(), OrganizationID: o.ID, TeamID: t.ID, Kind: memory.Note, Content: text, CreatedBy: memberID, CreatedAt: service.Now()}
			entries[i], vectors[i] = e, memory.Vector{EntryID: e.ID, Embedder: embedder.ID(), Values: vecs[i]}
			audits[i] = audit.New(o.ID, memberID, "memory.created", "MemoryEntry", e.ID, string(e.Kind))
		}
		if _, err := mem.Import(ctx, entries, vectors, audits); err != nil {
			return seed, fmt.Errorf("seed memory: entries %d+: %w", start, err)
		}
		seed.Entries += len(entries)
	}
	return seed, nil
}

// seedNote is a note of 8 to 24 words drawn from seedWords.
func seedNote(r *rand.Rand, i int) string {
	words := make([]string, 8+r.IntN(17))
	for j := range words {
		words[j] = seedWords[r.IntN(len(seedWords))]
	}
	return fmt.Sprintf("Note %d: %s.", i, strings.Join(words, " "))
}
