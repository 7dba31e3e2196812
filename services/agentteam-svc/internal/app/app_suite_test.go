package app_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/agentteam-svc/api"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/app"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
)

func TestApp(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "agentteam-svc")
}

var (
	db     *gorm.DB
	tokens *testkit.Issuer
	client *testkit.API
	// suiteCfg is the suite app's configuration, for specs that start an app of their own.
	suiteCfg config.Config
	// dnsServer resolves the names of model connections and MCP servers for the suite's apps.
	dnsServer *testkit.DNS
	// logs holds everything the suite's apps logged, for specs that check what is never logged.
	logs = &syncBuffer{}
)

// syncBuffer is a bytes.Buffer safe for the apps' concurrent log writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var _ = BeforeSuite(func() {
	var dsn string
	db, dsn = testkit.NewDatabase("agentteam_app")
	bus := testkit.Bus("agentteam_app")
	tokens = testkit.NewIssuer()

	cfg, err := config.Load()
	Expect(err).NotTo(HaveOccurred())
	cfg.HTTP.Addr = "127.0.0.1:0"
	// Stopping at the suite's end waits neither for load balancers nor for running handlers.
	cfg.HTTP.ShutdownDelay, cfg.NATS.ShutdownGrace = 0, 0
	cfg.DB.DSN = dsn
	// A statement on the pool from a goroutine holding a transaction panics (see testkit.NewDatabase).
	cfg.DB.GuardTransactions = true
	cfg.NATS.URL = testkit.NATSURL()
	cfg.NATS.Prefix = bus.Subject("")
	cfg.Auth.JWKSURL = tokens.JWKSURL()
	cfg.Auth.Issuer = tokens.IssuerName()
	// Local model and MCP test servers listen on 127.0.0.1; short leases and sweeps keep the
	// worker's recovery specs quick. The suite's app serves the API only: the worker specs start
	// apps with the worker (startWorker), so runs queued by other specs stay as they left them.
	cfg.OutboundAllowLoopback = true
	dnsServer = testkit.StartDNS()
	cfg.OutboundDNSServer = dnsServer.Addr()
	cfg.LogLevel = "debug"
	cfg.Runs.WorkerConcurrency = 0
	cfg.Runs.Lease = time.Second
	cfg.Runs.SweepInterval = 200 * time.Millisecond
	cfg.Runs.StaleAfter = 2 * time.Second
	cfg.Runs.ModelRetryBase = 10 * time.Millisecond
	cfg.Runs.ModelRetryMax = 50 * time.Millisecond

	suiteCfg = cfg

	Expect(app.Migrate(context.Background(), cfg, slog.New(slog.NewJSONHandler(GinkgoWriter, nil)))).To(Succeed())
	client = serve(cfg)
})

// serve runs an app with cfg until the suite or the spec that called it ends, and returns a
// contract-checking client of it once it is ready.
func serve(cfg config.Config) *testkit.API {
	GinkgoHelper()
	log := slog.New(slog.NewJSONHandler(io.MultiWriter(GinkgoWriter, logs), &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, log)
	Expect(err).NotTo(HaveOccurred())
	addr, err := a.Listen()
	Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
		a.Close()
	})
	c := testkit.NewAPI("http://"+addr.String(), api.OpenAPI)
	Eventually(func() int { return c.Do("GET", "/readyz", "", nil).Status }).Should(Equal(200))
	return c
}
