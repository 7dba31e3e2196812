// Package e2e is the platform's black-box suite: it builds the three service binaries, starts
// them against the real local infrastructure (each run in its own databases, NATS prefix, Redis
// key prefix and bucket), and talks to them over HTTP only.
package e2e

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/motionstudio/platform/pkg/testkit"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Platform end-to-end suite")
}

// platform is what the first process starts and every process uses.
type platform struct {
	IdentityURL  string   `json:"identity_url"`
	ContentURL   string   `json:"content_url"`
	AgentteamURL string   `json:"agentteam_url"`
	IdentityBin  string   `json:"identity_bin"`
	IdentityEnv  []string `json:"identity_env"`
	// The other binaries and environments, for specs that start services of their own
	// (keys_test.go).
	ContentBin   string   `json:"content_bin"`
	ContentEnv   []string `json:"content_env"`
	AgentteamBin string   `json:"agentteam_bin"`
	AgentteamEnv []string `json:"agentteam_env"`
	SigningSeed  []byte   `json:"signing_seed"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	Issuer       string   `json:"issuer"`
	// ScanDir holds each process's secrets and admin-CLI logs for the secret scan
	// (secretscan_test.go).
	ScanDir string `json:"scan_dir"`
	// MailURL is the HTTP API of the SMTP catcher (MailHog) that identity sends its email to.
	MailURL string `json:"mail_url"`
}

var p platform

const serviceClientID = "e2e-runner"

var _ = SynchronizedBeforeSuite(func() []byte {
	bins := map[string]string{}
	for _, svc := range []string{"identity-svc", "content-svc", "agentteam-svc"} {
		path, err := gexec.Build("github.com/motionstudio/platform/services/" + svc + "/cmd/" + svc)
		Expect(err).NotTo(HaveOccurred(), "build %s", svc)
		bins[svc] = path
	}
	DeferCleanup(gexec.CleanupBuildArtifacts)

	_, identityDSN := testkit.NewDatabase("e2e_identity")
	_, contentDSN := testkit.NewDatabase("e2e_content")
	_, agentteamDSN := testkit.NewDatabase("e2e_agentteam")
	bus := testkit.Bus("e2e")
	_, redisPrefix := testkit.Redis("e2e")
	bucket := testkit.Blob("e2e").Bucket()

	seed := make([]byte, ed25519.SeedSize)
	_, _ = rand.Read(seed)
	secret := base64.RawURLEncoding.EncodeToString(seed[:24])
	secrets.add("client_secret", secret)
	secrets.add("signing key", base64.StdEncoding.EncodeToString(seed))
	scanDir, err := os.MkdirTemp("", "e2e-secret-scan-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, scanDir)
	ports := freePorts(3)
	identityURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	// Identity delivers its email to the catcher that scripts/infra.sh starts, as make dev does;
	// specs tell their messages apart by a recipient address of their own.
	smtpAddr := testkit.Env("SMTP_ADDR", "127.0.0.1:1025")
	mailURL := testkit.Env("MAIL_API_URL", "http://127.0.0.1:8025")
	Expect(status(mailURL+"/api/v2/messages?limit=1")).To(Equal(http.StatusOK),
		"the SMTP catcher's API must answer at %s (run scripts/infra.sh up)", mailURL)
	// The issuer is identity's URL, so that OpenID discovery finds it (discovery_test.go).
	issuer := identityURL

	common := []string{
		"NATS_URL=" + testkit.Env("NATS_URL", "nats://127.0.0.1:4222"),
		"NATS_SUBJECT_PREFIX=" + bus.Subject(""),
		"REDIS_URL=" + testkit.Env("REDIS_URL", "redis://127.0.0.1:6379/0"),
		"REDIS_KEY_PREFIX=" + redisPrefix,
		"JWT_ISSUER=" + issuer,
		"JWKS_URL=" + identityURL + "/.well-known/jwks.json",
		"LOG_LEVEL=debug",
		// No load balancer watches these processes: stopping them need not wait for one.
		"HTTP_SHUTDOWN_DELAY=0s",
		"PATH=/usr/bin:/bin",
	}
	identityEnv := append([]string{
		fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", ports[0]),
		"DATABASE_URL=" + identityDSN,
		"SIGNING_KEY=" + base64.StdEncoding.EncodeToString(seed),
		"SIGNING_KEY_GENERATE=false",
		// dev-service is the client the README's walkthroughs use (scripts/dev.sh sets it up).
		"SERVICE_CLIENTS=" + serviceClientID + ":" + secret + ",dev-service:dev-service-secret-change-me",
		"SERVICE_CLIENT_AUDIENCES=" + serviceClientID + "=motionstudio reports",
		"OUTBOUND_ALLOW_LOOPBACK=true",
		"SMTP_ADDR=" + smtpAddr,
	}, common...)
	contentEnv := append([]string{
		fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", ports[1]),
		"DATABASE_URL=" + contentDSN,
		"S3_BUCKET=" + bucket,
	}, common...)
	agentteamEnv := append([]string{
		fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", ports[2]),
		"DATABASE_URL=" + agentteamDSN,
		// The agent-run specs answer with a model stub on 127.0.0.1.
		"OUTBOUND_ALLOW_LOOPBACK=true",
	}, common...)

	start(bins["identity-svc"], identityEnv)
	start(bins["content-svc"], contentEnv)
	start(bins["agentteam-svc"], agentteamEnv)

	out, err := json.Marshal(platform{
		IdentityURL:  identityURL,
		ContentURL:   fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		AgentteamURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2]),
		IdentityBin:  bins["identity-svc"],
		IdentityEnv:  identityEnv,
		ContentBin:   bins["content-svc"],
		ContentEnv:   contentEnv,
		AgentteamBin: bins["agentteam-svc"],
		AgentteamEnv: agentteamEnv,
		SigningSeed:  seed,
		ClientID:     serviceClientID,
		ClientSecret: secret,
		Issuer:       issuer,
		ScanDir:      scanDir,
		MailURL:      mailURL,
	})
	Expect(err).NotTo(HaveOccurred())
	for _, u := range []string{identityURL, fmt.Sprintf("http://127.0.0.1:%d", ports[1]), fmt.Sprintf("http://127.0.0.1:%d", ports[2])} {
		Eventually(func() int { return status(u + "/readyz") }).WithTimeout(60*time.Second).
			WithPolling(100*time.Millisecond).Should(Equal(http.StatusOK), "%s/readyz", u)
	}
	return out
}, func(data []byte) {
	Expect(json.Unmarshal(data, &p)).To(Succeed())
})

// start runs `<bin> serve` with env and stops it (SIGTERM, then wait) when the suite ends; its
// output stays in serviceSessions for the secret scan.
func start(bin string, env []string) {
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	serviceSessions[filepath.Base(bin)] = session
	DeferCleanup(func() {
		session.Terminate()
		Eventually(session).WithTimeout(30*time.Second).Should(gexec.Exit(0), "%s shuts down cleanly on SIGTERM", bin)
	})
}

func freePorts(n int) []int {
	ports := make([]int, n)
	listeners := make([]net.Listener, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		listeners[i] = l
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	for _, l := range listeners {
		_ = l.Close()
	}
	return ports
}

func status(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
