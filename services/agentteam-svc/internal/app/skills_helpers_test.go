package app_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
)

// Helpers of the skill library specs.

// startApp runs a second agent-team app on the suite's database with a changed configuration
// (admin key, shared source, hook secret) and returns a client of it; it stops with the spec.
func startApp(change func(*config.Config)) *testkit.API {
	GinkgoHelper()
	cfg := suiteCfg
	cfg.SkillSource.SyncDebounce = 50 * time.Millisecond
	change(&cfg)
	return serve(cfg)
}

// adminKey is the admin key of the apps the specs start with one.
const adminKey = "spec-admin-key"

// withAdminKey configures the admin key.
func withAdminKey(c *config.Config) { c.SkillsAdminKey = adminKey }

// skillRow is the part of a skill the specs read.
type skillRow struct {
	ID               string
	SkillKey         string
	ProfileKey       string
	Name             string
	Version          string
	Summary          string
	Status           string
	Visibility       string
	Origin           string
	OrganizationID   *string
	Roles            []string
	Tools            []string
	GoldenTestCount  int
	GoldenTests      []map[string]string
	Body             string
	License          string
	Compatibility    string
	Metadata         map[string]string
	SourceRepo       string
	SourcePath       string
	SourceCommit     string
	Warnings         []string
	AlreadyInLibrary bool
}

// key is a fresh skill key, so specs never see each other's skills.
func key(prefix string) string { return prefix + "-" + uuid.NewString()[:8] }

// authored is an authored-skill request; published ones carry a role and a golden test.
func authored(orgID, skillKey, version string, published bool) map[string]any {
	req := map[string]any{
		"organizationId": orgID, "skillKey": skillKey, "name": "Skill " + skillKey, "version": version,
		"summary": "Does " + skillKey, "body": "# " + skillKey + "\n\nSteps.", "roles": []string{},
		"actions": []map[string]string{{"name": "comment", "risk": "Low", "description": "Comments on the task."}},
	}
	if published {
		req["roles"] = []string{"qa"}
		req["goldenTests"] = []map[string]string{{"input": "in", "expected": "out"}}
	}
	return req
}

// author stores an authored skill as the token's member and returns it.
func author(token string, req map[string]any) skillRow {
	GinkgoHelper()
	r := client.Do("POST", "/api/skills/authored", token, req)
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	var s skillRow
	r.JSON(&s)
	return s
}

// skills decodes a list answer.
func skills(r testkit.Response) []skillRow {
	GinkgoHelper()
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	var out []skillRow
	r.JSON(&out)
	return out
}

// document is a skill document in our header keys.
func document(skillKey, version string, published bool, extra string) string {
	doc := fmt.Sprintf("---\nskillKey: %s\nname: Skill %s\nversion: %q\nsummary: Does %s.\n", skillKey, skillKey, version, skillKey)
	if published {
		doc += "roles: [qa]\ngoldenTests:\n  - input: in\n    expected: out\n"
	}
	return doc + extra + "---\n# " + skillKey + "\n\nSteps.\n"
}

// gitSource is a bare Git repository with a work tree that commits and pushes into it.
type gitSource struct {
	Bare string
	work *git.Repository
	dir  string
}

// newGitSource creates a local bare repository and a clone to commit from.
func newGitSource() *gitSource {
	GinkgoHelper()
	root := GinkgoT().TempDir()
	bare := filepath.Join(root, "skills.git")
	_, err := git.PlainInit(bare, true)
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(root, "work")
	work, err := git.PlainInit(dir, false)
	Expect(err).NotTo(HaveOccurred())
	_, err = work.CreateRemote(&gitconfig.RemoteConfig{Name: "origin", URLs: []string{bare}})
	Expect(err).NotTo(HaveOccurred())
	return &gitSource{Bare: bare, work: work, dir: dir}
}

// commit writes the files (a nil content removes the file), commits and pushes; it returns the
// commit hash.
func (g *gitSource) commit(files map[string]*string) string {
	GinkgoHelper()
	wt, err := g.work.Worktree()
	Expect(err).NotTo(HaveOccurred())
	for path, content := range files {
		full := filepath.Join(g.dir, path)
		if content == nil {
			_, err = wt.Remove(path)
			Expect(err).NotTo(HaveOccurred())
			continue
		}
		Expect(os.MkdirAll(filepath.Dir(full), 0o755)).To(Succeed())
		Expect(os.WriteFile(full, []byte(*content), 0o644)).To(Succeed())
		_, err = wt.Add(path)
		Expect(err).NotTo(HaveOccurred())
	}
	hash, err := wt.Commit("skills", &git.CommitOptions{Author: &object.Signature{Name: "spec", Email: "spec@example.com", When: time.Now()}})
	Expect(err).NotTo(HaveOccurred())
	Expect(g.work.Push(&git.PushOptions{RemoteName: "origin", RefSpecs: []gitconfig.RefSpec{"refs/heads/master:refs/heads/master"}})).To(Succeed())
	return hash.String()
}
