package e2e

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

// notExecuted marks the README block after it as one the test leaves alone; what follows the
// colon says why.
var notExecuted = regexp.MustCompile(`^<!--\s*not-executed:\s*\S.*-->$`)

// readmeBlock is one ```sh block of the README with the line it starts on.
type readmeBlock struct {
	Line int
	Text string
}

// readmeBlocks answers the README's ```sh blocks in order, without those marked not-executed,
// and how many were marked.
func readmeBlocks(doc string) (run []readmeBlock, skipped int) {
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```sh" {
			continue
		}
		start := i + 1
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		prev := i - 1
		for prev >= 0 && strings.TrimSpace(lines[prev]) == "" {
			prev--
		}
		if prev >= 0 && notExecuted.MatchString(strings.TrimSpace(lines[prev])) {
			skipped++
		} else {
			run = append(run, readmeBlock{Line: start, Text: strings.Join(lines[start:end], "\n")})
		}
		i = end
	}
	return run, skipped
}

// hostOf is the host:port of a base URL.
func hostOf(base string) string {
	u, err := url.Parse(base)
	Expect(err).NotTo(HaveOccurred())
	return u.Host
}

var _ = Describe("the README", func() {
	It("runs every command block against the platform, in order, without a failing command", func() {
		for _, tool := range []string{"bash", "curl", "jq", "psql", "oathtool", "python3", "split", "md5sum"} {
			_, err := exec.LookPath(tool)
			Expect(err).NotTo(HaveOccurred(), "the README walkthroughs need %s (apt-get install -y jq postgresql-client oathtool)", tool)
		}
		doc, err := os.ReadFile("../README.md")
		Expect(err).NotTo(HaveOccurred())
		blocks, _ := readmeBlocks(string(doc))
		Expect(blocks).NotTo(BeEmpty())

		dir := GinkgoT().TempDir()
		Expect(os.Mkdir(filepath.Join(dir, "bin"), 0o755)).To(Succeed())
		// bin/identity-svc is the operator CLI against this run's database and key.
		wrapper := "#!/usr/bin/env bash\nexec env -i " + shellQuote(p.IdentityEnv...) + " " + shellQuote(p.IdentityBin) + ` "$@"` + "\n"
		Expect(os.WriteFile(filepath.Join(dir, "bin", "identity-svc"), []byte(wrapper), 0o755)).To(Succeed())

		dsn, err := url.Parse(envValue(p.IdentityEnv, "DATABASE_URL"))
		Expect(err).NotTo(HaveOccurred())
		ports := freePorts(2)
		hookPort, stubPort := ports[0], ports[1]
		// The README speaks of a developer's `make dev`: fixed ports, the identity database, port
		// 9999 for the webhook receiver, port 8090 for the model stub. This run has its own of each.
		rewrite := strings.NewReplacer(
			"localhost:8081", hostOf(p.IdentityURL),
			"localhost:8082", hostOf(p.ContentURL),
			"localhost:8083", hostOf(p.AgentteamURL),
			"-d identity ", "-d "+strings.TrimPrefix(dsn.Path, "/")+" ",
			"127.0.0.1:9999", fmt.Sprintf("127.0.0.1:%d", hookPort),
			`("127.0.0.1", 9999)`, fmt.Sprintf(`("127.0.0.1", %d)`, hookPort),
			"127.0.0.1:8090", fmt.Sprintf("127.0.0.1:%d", stubPort),
		)
		// Tenant slugs are unique: the README's acme and demo get this run's suffix everywhere
		// (slugs, emails, file names alike), so other specs' tenants never collide with them.
		suffix := strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
		slugs := regexp.MustCompile(`\b(acme|demo)\b`)
		var script strings.Builder
		script.WriteString("set -euo pipefail\n")
		for _, b := range blocks {
			text := slugs.ReplaceAllString(rewrite.Replace(b.Text), "${1}"+suffix)
			fmt.Fprintf(&script, "echo '### README.md line %d' >&2\n%s\n", b.Line, text)
		}
		cmd := exec.Command("bash", "-c", script.String())
		cmd.Dir = dir
		repo, err := filepath.Abs("..")
		Expect(err).NotTo(HaveOccurred())
		// REPO is where the agent-team walkthrough builds its model stub from.
		cmd.Env = append(os.Environ(), "PGHOST="+dsn.Hostname(), "REPO="+repo)
		session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session).WithTimeout(10*time.Minute).Should(gexec.Exit(0),
			"a README command failed; the last '### README.md line N' in the output names its block")
		Expect(session.Err).To(gbytes.Say(fmt.Sprintf("### README.md line %d", blocks[len(blocks)-1].Line)))
		// The outcomes the walkthroughs promise in their comments.
		out := string(session.Out.Contents())
		for _, want := range []string{`"Summer promo"`, `"status": "Ready"`, `"email_verified":true`,
			`"verified":true`, `"token_type":"Bearer"`, `"valid":true`, `"succeeded":true`,
			"source image matches", "<svg", `"status":"Completed","output":"QA review: export works in every format."`,
			`{"tool":"delete_page","risk":"High","arguments":"{\"page\":\"draft\"}"}`, `{"status":"Queued"}`, `{"status":"Completed"}`,
			`{"kind":"ToolCall","toolName":"delete_page","status":"Succeeded"}`} {
			Expect(out).To(ContainSubstring(want))
		}
		// The AEP file downloaded through the presigned URLs of the project and of its editor
		// graph has the MD5 of the file uploaded: md5sum prints it for demo.aep, then for each
		// download ("-").
		sums := regexp.MustCompile(`(?m)^([0-9a-f]{32})  (\S+)$`).FindAllStringSubmatch(out, -1)
		Expect(sums).To(HaveLen(3))
		for _, download := range sums[1:] {
			Expect(download[2]).To(Equal("-"))
			Expect(download[1]).To(Equal(sums[0][1]))
		}
	})

	It("finds the blocks marked not-executed and only those", func() {
		blocks, skipped := readmeBlocks("<!-- not-executed: starts the platform itself -->\n```sh\nmake dev\n```\n\n```sh\necho hi\n```\n")
		Expect(skipped).To(Equal(1))
		Expect(blocks).To(Equal([]readmeBlock{{Line: 6, Text: "echo hi"}}))
	})
})

// envValue is the value of key in a KEY=value list.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// shellQuote quotes each word for bash and joins them with spaces.
func shellQuote(words ...string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
