package testkit

import (
	"context"
	"encoding/json"
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
	// cluster holds the clustering flags of a node of StartNATSCluster.
	cluster []string
	cmd     *exec.Cmd
	done    chan struct{}
}

// StartNATSServer starts /usr/sbin/nats-server (or nats-server from PATH) with JetStream
// storing in a temporary directory and waits until it answers. The server is killed and its
// directory removed when the suite (or the spec that started it) ends.
func StartNATSServer() *NATSServer {
	dir, err := os.MkdirTemp("", "testkit-nats-")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	s := &NATSServer{bin: natsServerBin(), port: freePort(), dir: dir}
	ginkgo.DeferCleanup(func() {
		s.kill()
		_ = os.RemoveAll(dir)
	})
	s.Start()
	return s
}

// StartNATSCluster starts n clustered nats-servers with JetStream (see StartNATSServer) and waits
// until the cluster can create streams with n replicas. ClusterURL lists their addresses.
func StartNATSCluster(n int) []*NATSServer {
	bin := natsServerBin()
	nodes := make([]*NATSServer, n)
	routes := make([]string, n)
	clusterPorts := make([]int, n)
	for i := range nodes {
		clusterPorts[i] = freePort()
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", clusterPorts[i])
	}
	for i := range nodes {
		dir, err := os.MkdirTemp("", "testkit-nats-")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		s := &NATSServer{bin: bin, port: freePort(), dir: dir, cluster: []string{
			"-n", fmt.Sprintf("node-%d", i+1), "--cluster_name", "testkit",
			"--cluster", fmt.Sprintf("nats://127.0.0.1:%d", clusterPorts[i]), "--routes", strings.Join(routes, ","),
		}}
		ginkgo.DeferCleanup(func() {
			s.kill()
			_ = os.RemoveAll(dir)
		})
		nodes[i] = s
	}
	// A node's JetStream answers only once a meta leader is elected, which needs a quorum, so
	// every node starts before any is waited for.
	for _, s := range nodes {
		s.launch()
	}
	for _, s := range nodes {
		s.waitAnswers()
	}
	// Every node answering is not yet every node a placement peer: the meta leader may still
	// see one offline ("no suitable peers for placement") while routes settle.
	gomega.Eventually(func() error { return placesReplicas(ClusterURL(nodes), n) }).WithTimeout(30*time.Second).
		WithPolling(100*time.Millisecond).Should(gomega.Succeed(), "the NATS cluster cannot place %d replicas", n)
	return nodes
}

// placesReplicas creates and deletes a memory stream of n replicas through the servers at url.
func placesReplicas(url string, n int) error {
	nc, err := nats.Connect(url, nats.Timeout(time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := nc.JetStream(nats.MaxWait(2 * time.Second))
	if err != nil {
		return err
	}
	const probe = "TESTKIT_PLACEMENT_PROBE"
	if _, err := js.AddStream(&nats.StreamConfig{Name: probe, Subjects: []string{"testkit.placement.probe"},
		Replicas: n, Storage: nats.MemoryStorage}); err != nil {
		return err
	}
	return js.DeleteStream(probe)
}

// ClusterURL is NATS_URL for the given servers: their client URLs, comma-separated.
func ClusterURL(nodes []*NATSServer) string {
	urls := make([]string, len(nodes))
	for i, s := range nodes {
		urls[i] = s.URL()
	}
	return strings.Join(urls, ",")
}

// URL is the server's client URL.
func (s *NATSServer) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

// Start runs the server (again) on the same port and store directory, so streams and
// consumers survive a Stop, and waits until JetStream answers.
func (s *NATSServer) Start() {
	s.launch()
	s.waitAnswers()
}

func (s *NATSServer) launch() {
	gomega.Expect(s.cmd).To(gomega.BeNil(), "nats-server already running")
	args := append([]string{"-a", "127.0.0.1", "-p", strconv.Itoa(s.port), "-js", "-sd", s.dir}, s.cluster...)
	cmd := exec.Command(s.bin, args...) // #nosec G204 -- tests start the nats-server binary they found, with arguments they built
	cmd.Stdout = ginkgo.GinkgoWriter
	cmd.Stderr = ginkgo.GinkgoWriter
	gomega.Expect(cmd.Start()).To(gomega.Succeed())
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done = cmd, done
}

func (s *NATSServer) waitAnswers() {
	gomega.Eventually(s.answers).WithTimeout(30*time.Second).WithPolling(50*time.Millisecond).
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

// natsServerBin is nats-server from PATH: under make, the one pinned in tools/go.mod (.bin comes
// first), since Debian's 2.9 loses a work-queue stream's state when cluster nodes are killed.
func natsServerBin() string {
	bin, err := exec.LookPath("nats-server")
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "nats-server must be installed (make tools, or scripts/infra.sh up)")
	return bin
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

// Listen subscribes to subject (the server's name for it, bus prefix included) with a plain
// NATS connection, as a consumer outside the platform would, and answers the channel its
// messages arrive on. The connection closes when the spec or suite that called it ends.
func Listen(subject string) chan *nats.Msg {
	ginkgo.GinkgoHelper()
	nc, err := nats.Connect(NATSURL())
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(nc.Close)
	ch := make(chan *nats.Msg, 64)
	_, err = nc.ChanSubscribe(subject, ch)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(nc.Flush()).To(gomega.Succeed())
	return ch
}

// AwaitMessage waits up to thirty seconds for a message on ch (from Listen) whose JSON payload
// has field equal to value, dropping the others, and answers it.
func AwaitMessage(ch chan *nats.Msg, field, value string) *nats.Msg {
	ginkgo.GinkgoHelper()
	var msg *nats.Msg
	gomega.Eventually(func() any {
		select {
		case msg = <-ch:
			var payload map[string]any
			gomega.Expect(json.Unmarshal(msg.Data, &payload)).To(gomega.Succeed(), "payload: %s", msg.Data)
			return payload[field]
		default:
			return nil
		}
	}).WithTimeout(30*time.Second).Should(gomega.Equal(value), "a message with %s %s", field, value)
	return msg
}
