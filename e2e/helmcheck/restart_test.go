package helmcheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

// fakeService prints "start <pid>" when it starts and "stop <pid>" when SIGTERM stops it.
const fakeService = `#!/bin/sh
trap 'echo "stop $$"; exit 0' TERM
echo "start $$"
while :; do sleep 0.1; done
`

var _ = Describe("the dev image's restart script", func() {
	var (
		dir, script, service, marker string
	)

	BeforeEach(func() {
		var err error
		script, err = filepath.Abs("../../deploy/tilt/restart.sh")
		Expect(err).NotTo(HaveOccurred())
		dir = GinkgoT().TempDir()
		service = filepath.Join(dir, "service")
		Expect(os.WriteFile(service, []byte(fakeService), 0o700)).To(Succeed())
		marker = filepath.Join(dir, "restart")
	})

	start := func(args ...string) *gexec.Session {
		GinkgoHelper()
		cmd := exec.Command("/bin/sh", append([]string{script}, args...)...)
		cmd.Env = append(os.Environ(), "RESTART_MARKER="+marker)
		session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { session.Kill().Wait(5 * time.Second) })
		return session
	}

	It("restarts the command each time a live update rewrites the marker, and stops it on SIGTERM", func() {
		session := start(service, "serve")
		Eventually(session.Out).Should(gbytes.Say(`start \d+`))
		for i := range 2 {
			Expect(os.WriteFile(marker, []byte{byte('a' + i)}, 0o600)).To(Succeed())
			Eventually(session.Out, 5*time.Second).Should(gbytes.Say(`stop \d+\s+start \d+`))
		}
		Expect(strings.Count(string(session.Out.Contents()), "start")).To(Equal(3))
		session.Signal(syscall.SIGTERM)
		Eventually(session, 5*time.Second).Should(gexec.Exit(0))
		Expect(session.Out).To(gbytes.Say(`stop \d+`))
	})

	It("runs a command that ends on its own once and exits with its status", func() {
		session := start("/bin/sh", "-c", "echo migrated; exit 3")
		Eventually(session, 5*time.Second).Should(gexec.Exit(3))
		Expect(strings.Count(string(session.Out.Contents()), "migrated")).To(Equal(1))
	})
})
