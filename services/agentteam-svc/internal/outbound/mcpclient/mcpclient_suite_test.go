package mcpclient_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestMCPClient(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "mcpclient")
}

// everythingVersion pins the reference MCP server the suite talks to.
const everythingVersion = "2026.8.31"

// everythingURL is the streamable HTTP endpoint of this process's server-everything.
var everythingURL string

// logs captures the client's log, so specs can check what it says and does not say.
var (
	logs *bytes.Buffer
	log  *slog.Logger
)

var _ = SynchronizedBeforeSuite(func() []byte {
	installEverything()
	return nil
}, func([]byte) {
	everythingURL = startEverything()
})

var _ = BeforeEach(func() {
	logs = &bytes.Buffer{}
	log = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
})

// npmDir is where the npm package is installed once and kept between runs (.state/npm at the
// repository root, ignored by git).
func npmDir() string {
	dir, err := os.Getwd()
	Expect(err).NotTo(HaveOccurred())
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return filepath.Join(dir, ".state", "npm")
		}
		parent := filepath.Dir(dir)
		Expect(parent).NotTo(Equal(dir), "no go.work above the test directory")
		dir = parent
	}
}

func everythingBin() string {
	return filepath.Join(npmDir(), "node_modules", ".bin", "mcp-server-everything")
}

// installEverything installs @modelcontextprotocol/server-everything with npm unless the pinned
// version is already there, so later runs start at once.
func installEverything() {
	manifest := filepath.Join(npmDir(), "node_modules", "@modelcontextprotocol", "server-everything", "package.json")
	if data, err := os.ReadFile(manifest); err == nil && bytes.Contains(data, []byte(`"version": "`+everythingVersion+`"`)) {
		return
	}
	cmd := exec.Command("npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", npmDir(),
		"@modelcontextprotocol/server-everything@"+everythingVersion)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "npm install: %s", out)
}

// startEverything runs `server-everything streamableHttp` on a free port with an empty
// environment apart from PATH, HOME and PORT, and returns its /mcp URL.
func startEverything() string {
	port := freePort()
	cmd := exec.Command(everythingBin(), "streamableHttp")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "PORT=" + strconv.Itoa(port)}
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	Eventually(func() error {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
		}
		return err
	}).WithTimeout(30 * time.Second).Should(Succeed())
	return "http://" + addr + "/mcp"
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
