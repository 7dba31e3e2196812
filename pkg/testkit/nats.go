package testkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/natsx"
)

var subjectUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// NATSURL is the server suites share (NATS_URL, default the local server).
func NATSURL() string { return Env("NATS_URL", "nats://127.0.0.1:4222") }

// Bus connects to NATSURL with the subject prefix "<scope>." so that this suite's subjects,
// streams and consumers never meet another suite's. It fails the suite when NATS is not
// reachable. When the suite ends it deletes every stream carrying the prefix and closes.
func Bus(suite string) *natsx.Bus {
	return BusAt(NATSURL(), suite)
}

// BusAt is Bus against the server at url, for suites that run their own (StartNATSServer).
func BusAt(url, suite string) *natsx.Bus {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	prefix := subjectUnsafe.ReplaceAllString(Scope(suite), "_") + "."
	log := slog.New(slog.NewTextHandler(ginkgo.GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
	bus, err := natsx.Connect(ctx, natsx.Config{URL: url, Prefix: prefix}, "testkit-"+Scope(suite), log)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "nats must be reachable at %s (run scripts/infra.sh up)", url)
	ginkgo.DeferCleanup(func(ctx context.Context) {
		defer bus.Close()
		if !bus.Conn().IsConnected() {
			return
		}
		streamPrefix := bus.StreamName("")
		names := bus.JetStream().StreamNames(ctx)
		var doomed []string
		for name := range names.Name() {
			if strings.HasPrefix(name, streamPrefix) {
				doomed = append(doomed, name)
			}
		}
		for _, name := range doomed {
			gomega.Expect(bus.JetStream().DeleteStream(ctx, name)).To(gomega.Succeed(), "delete stream %s", name)
		}
	})
	return bus
}

// NATSServer is a nats-server with JetStream that a suite runs for itself, on 127.0.0.1 and
// a free port, so it can stop and restart it.
type NATSServer struct {
	bin  string
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartNATSServer starts /usr/sbin/nats-server (or nats-server from PATH) with JetStream
// storing in a temporary directory and waits until it answers. The server is killed and its
// directory removed when the suite (or the spec that started it) ends.
func StartNATSServer() *NATSServer {
	bin := "/usr/sbin/nats-server"
	if _, err := os.Stat(bin); err != nil {
		bin, err = exec.LookPath("nats-server")
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "nats-server must be installed (run scripts/infra.sh up)")
	}
	dir, err := os.MkdirTemp("", "testkit-nats-")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	s := &NATSServer{bin: bin, port: freePort(), dir: dir}
	ginkgo.DeferCleanup(func() {
		s.kill()
		_ = os.RemoveAll(dir)
	})
	s.Start()
	return s
}

// URL is the server's client URL.
func (s *NATSServer) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

// Start runs the server (again) on the same port and store directory, so streams and
// consumers survive a Stop, and waits until JetStream answers.
func (s *NATSServer) Start() {
	gomega.Expect(s.cmd).To(gomega.BeNil(), "nats-server already running")
	cmd := exec.Command(s.bin, "-a", "127.0.0.1", "-p", strconv.Itoa(s.port), "-js", "-sd", s.dir)
	cmd.Stdout = ginkgo.GinkgoWriter
	cmd.Stderr = ginkgo.GinkgoWriter
	gomega.Expect(cmd.Start()).To(gomega.Succeed())
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	gomega.Eventually(s.answers).WithTimeout(20*time.Second).WithPolling(50*time.Millisecond).
		Should(gomega.Succeed(), "nats-server on port %d did not start", s.port)
}

// Stop shuts the server down gracefully, so JetStream flushes its store, and waits for it
// to exit.
func (s *NATSServer) Stop() {
	gomega.Expect(s.cmd).NotTo(gomega.BeNil(), "nats-server not running")
	gomega.Expect(s.cmd.Process.Signal(syscall.SIGTERM)).To(gomega.Succeed())
	gomega.Eventually(s.done).WithTimeout(30*time.Second).Should(gomega.BeClosed(), "nats-server did not stop")
	s.cmd, s.done = nil, nil
}

func (s *NATSServer) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd, s.done = nil, nil
}

// answers checks that the server accepts a connection and its JetStream responds.
func (s *NATSServer) answers() error {
	select {
	case <-s.done:
		return gomega.StopTrying("nats-server exited")
	default:
	}
	nc, err := nats.Connect(s.URL(), nats.Timeout(time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	resp, err := nc.Request("$JS.API.INFO", nil, time.Second)
	if err != nil {
		return err
	}
	if strings.Contains(string(resp.Data), `"error"`) {
		return errors.New(string(resp.Data))
	}
	return nil
}

// freePort asks the kernel for an unused port on 127.0.0.1.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
