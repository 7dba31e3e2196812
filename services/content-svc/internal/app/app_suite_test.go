package app_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/api"
	"github.com/motionstudio/platform/services/content-svc/internal/app"
	"github.com/motionstudio/platform/services/content-svc/internal/config"
)

func TestApp(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "content-svc")
}

var (
	db     *gorm.DB
	tokens *testkit.Issuer
	client *testkit.API
	// baseURL is the service's address, for requests the contract client cannot make
	// (streamed bodies).
	baseURL string
	// natsPrefix is the service's NATS subject prefix, for independent subscribers.
	natsPrefix string
	// suiteCfg is the configuration of the suite's replica, for starting more.
	suiteCfg config.Config
)

var _ = BeforeSuite(func() {
	var dsn string
	db, dsn = testkit.NewDatabase("content_app")
	bus := testkit.Bus("content_app")
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
	cfg.Blob = testkit.BlobConfig("content_app")
	cfg.Auth.JWKSURL = tokens.JWKSURL()
	cfg.Auth.Issuer = tokens.IssuerName()
	// The multipart AEP flow runs with small files: S3's minimum part size and no 300 MB floor.
	cfg.Uploads.MinMultipartBytes = 1
	cfg.Uploads.PartSizeBytes = 5 << 20
	cfg.Uploads.MaxSingleBytes = aepSingleLimit

	log := slog.New(slog.NewJSONHandler(GinkgoWriter, nil))
	Expect(app.Migrate(context.Background(), cfg, log)).To(Succeed())
	DeferCleanup(testkit.RemoveBucket, context.Background(), cfg.Blob)
	suiteCfg = cfg
	client, baseURL = serve(cfg)
	natsPrefix = cfg.NATS.Prefix
})

// serve runs a replica of the service with cfg until the suite (or the spec that started it)
// ends and answers a client of it and its base URL once it is ready.
func serve(cfg config.Config) (*testkit.API, string) {
	GinkgoHelper()
	log := slog.New(slog.NewJSONHandler(GinkgoWriter, nil))
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
	base := "http://" + addr.String()
	c := testkit.NewAPI(base, api.OpenAPI)
	Eventually(func() int { return c.Do("GET", "/readyz", "", nil).Status }).Should(Equal(200))
	return c, base
}
