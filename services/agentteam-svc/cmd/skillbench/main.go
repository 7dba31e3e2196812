// Command skillbench seeds and measures the skill library against a PostgreSQL database:
//
//	skillbench seed  -dsn URL [-org ID] [-member ID] [-own 2000] [-shared 500]
//	    migrates the database, creates the organization with the member as its Owner (or uses
//	    the existing one), and stores
//	    the organization's own skills and shared skills (Published, with embeddings); prints the
//	    organization and member ids for a list benchmark (GET /api/skills?organizationId=...).
//	skillbench index -dsn URL [-files 1000]
//	    builds a local bare Git repository of that many SKILL.md files, syncs it into the shared
//	    library as the service does (clone, parse, embed, upsert), and prints files per second.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/gitsource"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "skillbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: skillbench seed|index -dsn URL [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dsn := fs.String("dsn", "", "PostgreSQL URL of the database to use (migrated first)")
	orgID := fs.String("org", uuid.NewString(), "organization id (seed)")
	memberID := fs.String("member", uuid.NewString(), "the organization Owner's member id (seed)")
	own := fs.Int("own", 2000, "the organization's own skills (seed)")
	shared := fs.Int("shared", 500, "shared skills (seed)")
	files := fs.Int("files", 1000, "SKILL.md files of the Git source (index)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *dsn == "" {
		return errors.New("-dsn is required")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := pgdb.Open(ctx, pgdb.Config{DSN: *dsn, MaxOpenConns: 10, MaxIdleConns: 5})
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	if err := pgdb.Migrate(ctx, db, log, outbox.Migrations, store.Migrations); err != nil {
		return err
	}
	switch args[0] {
	case "seed":
		return seed(ctx, db, log, *orgID, *memberID, *own, *shared)
	case "index":
		return index(ctx, db, log, *files)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

func newService(db *gorm.DB, log *slog.Logger, src library.SourceReader) *library.Service {
	return library.NewService(library.Deps{
		Store: store.NewLibrary(db), Access: access.NewChecker(store.NewOrgs(db)), Embedder: embed.NewLocal(), Source: src,
		NewID: service.NewID, Now: service.Now, Log: log,
	})
}

// document is a Published skill document in our header keys.
func document(key string, i int) string {
	return fmt.Sprintf("---\nskillKey: %s\nname: Skill %d\nversion: \"1.%d\"\nsummary: Handles case %d of the benchmark with care.\n"+
		"roles: [qa, backend]\ngoldenTests:\n  - input: case %d\n    expected: handled\n---\n# Skill %d\n\nStep one, step two, step three for case %d.\n",
		key, i, i%7, i, i, i, i)
}

func seed(ctx context.Context, db *gorm.DB, log *slog.Logger, orgID, memberID string, own, shared int) error {
	now := service.Now()
	orgs := store.NewOrgs(db)
	o := org.Organization{ID: orgID, Name: "Skill bench", CreatedAt: now}
	owner := org.Membership{OrganizationID: orgID, MemberID: memberID, Role: access.Owner, CreatedAt: now}
	// An existing organization (the board benchmark's) is used as it is, with its members.
	if _, err := orgs.Organization(ctx, orgID); apperr.Is(err, apperr.NotFound) {
		err = orgs.CreateOrganization(ctx, o, owner, audit.New(orgID, memberID, "organization.created", "Organization", orgID, o.Name))
		if err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	svc := newService(db, log, nil)
	skills := svc.Library(library.Skill)
	for i := range own {
		it, err := library.Parse(document(fmt.Sprintf("own-%05d", i), i), library.Source{})
		if err == nil {
			_, err = skills.Author(ctx, memberID, orgID, it)
		}
		if err != nil {
			return fmt.Errorf("own skill %d: %w", i, err)
		}
	}
	repo := "skillbench-" + uuid.NewString()[:8]
	for i := range shared {
		src := library.Source{Repo: repo, Path: fmt.Sprintf("shared-%05d/SKILL.md", i), Commit: "seed"}
		if _, err := skills.IndexShared(ctx, document(fmt.Sprintf("shared-%05d", i), i), src); err != nil {
			return fmt.Errorf("shared skill %d: %w", i, err)
		}
	}
	fmt.Printf("organization %s member %s own %d shared %d\n", orgID, memberID, own, shared)
	return nil
}

func index(ctx context.Context, db *gorm.DB, log *slog.Logger, files int) error {
	dir, err := os.MkdirTemp("", "skillbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bare, err := buildRepo(dir, files)
	if err != nil {
		return err
	}
	src, err := gitsource.NewGit(bare, "", filepath.Join(dir, "cache"))
	if err != nil {
		return err
	}
	svc := newService(db, log, src)
	start := time.Now()
	res, err := svc.SyncNow(ctx)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	fmt.Printf("indexed %d of %d files (%d problems) in %s: %.0f files/s\n", res.Indexed, files, len(res.Problems),
		elapsed.Round(time.Millisecond), float64(res.Indexed)/elapsed.Seconds())
	return nil
}

// buildRepo commits the files into a work tree and pushes them into a bare repository.
func buildRepo(dir string, files int) (string, error) {
	bare := filepath.Join(dir, "skills.git")
	if _, err := git.PlainInit(bare, true); err != nil {
		return "", err
	}
	work := filepath.Join(dir, "work")
	repo, err := git.PlainInit(work, false)
	if err != nil {
		return "", err
	}
	prefix := uuid.NewString()[:8]
	for i := range files {
		path := filepath.Join(work, fmt.Sprintf("skills/s-%s-%05d/SKILL.md", prefix, i))
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(document(fmt.Sprintf("s-%s-%05d", prefix, i), i)), 0o600); err != nil {
			return "", err
		}
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", err
	}
	if err := wt.AddGlob("skills"); err != nil {
		return "", err
	}
	sig := &object.Signature{Name: "skillbench", Email: "skillbench@example.com", When: time.Now()}
	if _, err := wt.Commit("skills", &git.CommitOptions{Author: sig}); err != nil {
		return "", err
	}
	if _, err := repo.CreateRemote(&gitconfig.RemoteConfig{Name: "origin", URLs: []string{bare}}); err != nil {
		return "", err
	}
	return bare, repo.Push(&git.PushOptions{RemoteName: "origin"})
}
