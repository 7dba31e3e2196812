package library

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
)

// SkillFile is the name of the files a sync indexes.
const SkillFile = "SKILL.md"

// SourceFile is one file of the shared source.
type SourceFile struct {
	Path    string
	Content []byte
}

// Snapshot is the shared source at one point: where it is, its commit and the commit's time
// (empty and zero for a plain directory) and its SKILL.md files.
type Snapshot struct {
	Repo, Commit string
	At           time.Time
	Files        []SourceFile
}

// SourceReader reads the shared source.
type SourceReader interface {
	Snapshot(ctx context.Context) (Snapshot, error)
}

// Problem is one file a sync could not index.
type Problem struct {
	Path, Message string
}

// SyncResult says what a sync did.
type SyncResult struct {
	Repo, Commit string
	// Indexed counts the documents stored; Withdrawn the shared documents no longer in the source.
	Indexed, Withdrawn int
	Problems           []Problem
	Warnings           []Problem
}

// Sync re-reads the shared source with the admin key (see Index for the key rules).
func (s *Service) Sync(ctx context.Context, adminKey string) (SyncResult, error) {
	if err := s.admin(adminKey); err != nil {
		return SyncResult{}, err
	}
	return s.SyncNow(ctx)
}

// SyncNow re-reads the shared source: every SKILL.md is indexed as a shared skill with its repo,
// path, commit and content hash; a file whose content did not change is not embedded again (it
// keeps its vector) and, when its identity is the same too, not rewritten; a bad file is
// reported and skipped; a shared skill of this repo that is no longer in it (its path is gone or
// now holds another key or version) is withdrawn, except those of a file that failed, which keep
// their last good version. Without a configured source it returns Invalid.
func (s *Service) SyncNow(ctx context.Context) (SyncResult, error) {
	if s.d.Source == nil {
		return SyncResult{}, apperr.Invalidf("No shared skill source is configured.")
	}
	snap, err := s.d.Source.Snapshot(ctx)
	if err != nil {
		return SyncResult{}, fmt.Errorf("library: read the shared source: %w", err)
	}
	res := SyncResult{Repo: snap.Repo, Commit: snap.Commit}
	before, err := s.d.Store.SharedFrom(ctx, Skill, snap.Repo)
	if err != nil {
		return res, err
	}
	byHash := map[string]Item{}
	for _, it := range before {
		if it.Source.Hash != "" && it.Embedding != nil {
			byHash[it.Source.Path+"\x00"+it.Source.Hash] = it
		}
	}
	keep, failed, seen := map[string]bool{}, map[string]bool{}, map[string]string{}
	unchanged := 0
	problem := func(path string, err error) {
		failed[path] = true
		res.Problems = append(res.Problems, Problem{Path: path, Message: message(err)})
	}
	var batch []Item
	for _, f := range snap.Files {
		if path.Base(f.Path) != SkillFile {
			continue
		}
		sum := sha256.Sum256(f.Content)
		hash := hex.EncodeToString(sum[:])
		it, err := Parse(string(f.Content), Source{Repo: snap.Repo, Path: f.Path, Commit: snap.Commit, At: snap.At, Hash: hash})
		if err == nil && seen[identity(it)] != "" {
			err = apperr.Invalidf("%s version %s is already defined by %s.", it.Key, it.Version, seen[identity(it)])
		}
		if err != nil {
			problem(f.Path, err)
			continue
		}
		seen[identity(it)] = f.Path
		prev, same := byHash[f.Path+"\x00"+hash]
		stored := same && prev.Key == it.Key && prev.Version == it.Version
		if !stored {
			s.asSharedWith(ctx, Skill, &it, prev.Embedding)
		}
		for _, w := range it.Warnings {
			res.Warnings = append(res.Warnings, Problem{Path: f.Path, Message: w})
		}
		if stored {
			keep[prev.ID] = true
			unchanged++
			continue
		}
		if batch = append(batch, it); len(batch) == syncBatch {
			s.storeBatch(ctx, batch, keep, problem)
			batch = batch[:0]
		}
	}
	s.storeBatch(ctx, batch, keep, problem)
	res.Indexed = len(keep)
	existing, err := s.d.Store.SharedFrom(ctx, Skill, snap.Repo)
	if err != nil {
		return res, err
	}
	var gone []string
	for _, it := range existing {
		if !keep[it.ID] && !failed[it.Source.Path] {
			gone = append(gone, it.ID)
		}
	}
	res.Withdrawn = len(gone)
	if err := s.d.Store.Delete(ctx, gone); err != nil {
		return res, err
	}
	s.d.Log.InfoContext(ctx, "shared skill source synced", "repo", res.Repo, "commit", res.Commit, "indexed", res.Indexed,
		"unchanged", unchanged, "withdrawn", res.Withdrawn, "problems", len(res.Problems))
	return res, nil
}

// syncBatch is how many documents a sync stores in one statement.
const syncBatch = 250

// storeBatch upserts the items in one statement; when that fails it stores them one by one, so
// one bad document is reported and the others are kept.
func (s *Service) storeBatch(ctx context.Context, batch []Item, keep map[string]bool, problem func(string, error)) {
	if len(batch) == 0 {
		return
	}
	stored, err := s.d.Store.UpsertShared(ctx, batch)
	if err != nil {
		stored = nil
		for _, it := range batch {
			one, err := s.d.Store.UpsertShared(ctx, []Item{it})
			if err != nil {
				problem(it.Source.Path, err)
				continue
			}
			stored = append(stored, one...)
		}
	}
	for _, it := range stored {
		keep[it.ID] = true
	}
}

// VerifyHook checks a push hook from host: without a configured secret every hook is accepted;
// with one, GitHub-style hosts must sign the body (X-Hub-Signature-256: sha256=<hex HMAC>) and
// GitLab-style hosts must send the secret in X-Gitlab-Token, both compared in constant time;
// any other host is refused. It returns Unauthenticated (401): the hook proves no identity.
func (s *Service) VerifyHook(host string, header func(string) string, body []byte) error {
	secret := s.d.HookSecret
	if secret == "" {
		return nil
	}
	switch strings.ToLower(host) {
	case "github", "github.com", "gitea", "forgejo", "gogs", "codeberg", "codeberg.org":
		sig, ok := strings.CutPrefix(header("X-Hub-Signature-256"), "sha256=")
		got, err := hex.DecodeString(sig)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		if ok && err == nil && hmac.Equal(got, mac.Sum(nil)) {
			return nil
		}
	case "gitlab", "gitlab.com":
		if subtle.ConstantTimeCompare([]byte(header("X-Gitlab-Token")), []byte(secret)) == 1 {
			return nil
		}
	}
	return apperr.E(apperr.Unauthenticated, "hook_unsigned", "The push hook is not signed with the configured secret.")
}

// Syncer runs SyncNow when triggered, debounced: triggers that arrive while it waits or syncs
// lead to one more sync, not one each.
type Syncer struct {
	sync   func(context.Context) (SyncResult, error)
	wait   time.Duration
	kick   chan struct{}
	report func(SyncResult, error)
}

// NewSyncer returns a Syncer of s that waits wait after a trigger and hands every outcome to
// report.
func NewSyncer(s *Service, wait time.Duration, report func(SyncResult, error)) *Syncer {
	return &Syncer{sync: s.SyncNow, wait: wait, kick: make(chan struct{}, 1), report: report}
}

// Trigger asks for a sync; it never blocks.
func (y *Syncer) Trigger() {
	select {
	case y.kick <- struct{}{}:
	default:
	}
}

// Run syncs on every (debounced) trigger until ctx is done.
func (y *Syncer) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-y.kick:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(y.wait):
		}
		select {
		case <-y.kick:
		default:
		}
		y.report(y.sync(ctx))
	}
}

// message is what a sync result says of a file's error: the client message of an apperr, else
// the error's text.
func message(err error) string {
	if e, ok := apperr.As(err); ok && e.Message != "" {
		return e.Message
	}
	return err.Error()
}
