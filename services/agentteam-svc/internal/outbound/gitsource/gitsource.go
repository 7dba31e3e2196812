// Package gitsource reads the shared skill source for the library: a local directory, or a Git
// repository (any URL go-git can clone, a local bare repository included) cloned once and
// fetched again on every read.
package gitsource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
)

// Dir reads the SKILL.md files under a local directory; its snapshots have no commit.
type Dir struct{ Root string }

// Snapshot walks the directory. Files are read through an os.Root, so a SKILL.md that is a
// symbolic link, or a directory swapped for one during the walk, cannot lead outside it.
func (d Dir) Snapshot(ctx context.Context) (library.Snapshot, error) {
	root, err := filepath.Abs(d.Root)
	if err != nil {
		return library.Snapshot{}, fmt.Errorf("gitsource: %w", err)
	}
	dir, err := os.OpenRoot(root)
	if err != nil {
		return library.Snapshot{}, fmt.Errorf("gitsource: %w", err)
	}
	defer dir.Close()
	snap := library.Snapshot{Repo: root}
	err = fs.WalkDir(dir.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return errors.Join(err, ctx.Err())
		}
		if e.IsDir() || e.Name() != library.SkillFile {
			return nil
		}
		raw, err := dir.ReadFile(p)
		if err != nil {
			return err
		}
		snap.Files = append(snap.Files, library.SourceFile{Path: p, Content: raw})
		return nil
	})
	if err != nil {
		return library.Snapshot{}, fmt.Errorf("gitsource: read %s: %w", root, err)
	}
	return snap, nil
}

// Git reads the SKILL.md files of a branch (or the default branch) of a Git repository, kept
// in a bare clone under Cache.
type Git struct {
	URL    string
	Branch string
	Cache  string
	mu     sync.Mutex
}

// NewGit returns a reader of the repository at url; an empty cache clones into a fresh
// temporary directory of this process.
func NewGit(url, branch, cache string) (*Git, error) {
	if cache == "" {
		dir, err := os.MkdirTemp("", "skills-source-")
		if err != nil {
			return nil, fmt.Errorf("gitsource: %w", err)
		}
		cache = dir
	}
	return &Git{URL: url, Branch: branch, Cache: cache}, nil
}

// Snapshot clones the repository the first time and fetches it afterwards, then reads the
// branch's commit.
func (g *Git) Snapshot(ctx context.Context) (library.Snapshot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	repo, err := g.open(ctx)
	if err != nil {
		return library.Snapshot{}, err
	}
	name := plumbing.HEAD
	if g.Branch != "" {
		name = plumbing.NewBranchReferenceName(g.Branch)
	}
	ref, err := repo.Reference(name, true)
	if err != nil {
		return library.Snapshot{}, fmt.Errorf("gitsource: resolve %s of %s: %w", name, g.URL, err)
	}
	commit, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return library.Snapshot{}, fmt.Errorf("gitsource: read commit %s: %w", ref.Hash(), err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return library.Snapshot{}, fmt.Errorf("gitsource: read tree of %s: %w", ref.Hash(), err)
	}
	snap := library.Snapshot{Repo: g.URL, Commit: ref.Hash().String(), At: commit.Committer.When.UTC()}
	err = tree.Files().ForEach(func(f *object.File) error {
		if path.Base(f.Name) != library.SkillFile {
			return nil
		}
		text, err := f.Contents()
		snap.Files = append(snap.Files, library.SourceFile{Path: f.Name, Content: []byte(text)})
		return err
	})
	if err != nil {
		return library.Snapshot{}, fmt.Errorf("gitsource: read files of %s: %w", ref.Hash(), err)
	}
	return snap, nil
}

// branches mirrors every branch of the remote onto the clone's own.
var branches = []gitconfig.RefSpec{"+refs/heads/*:refs/heads/*"}

func (g *Git) open(ctx context.Context) (*git.Repository, error) {
	repo, err := git.PlainOpen(g.Cache)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		if repo, err = git.PlainCloneContext(ctx, g.Cache, true, &git.CloneOptions{URL: g.URL}); err != nil {
			return nil, fmt.Errorf("gitsource: clone %s: %w", g.URL, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("gitsource: open %s: %w", g.Cache, err)
	}
	err = repo.FetchContext(ctx, &git.FetchOptions{RemoteName: git.DefaultRemoteName, RefSpecs: branches, Force: true, Prune: true})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, fmt.Errorf("gitsource: fetch %s: %w", g.URL, err)
	}
	return repo, nil
}
