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
)

var _ = BeforeSuite(func() {
	var dsn string
	db, dsn = testkit.NewDatabase("content_app")
	bus := testkit.Bus("content_app")
	tokens = testkit.NewIssuer()

	cfg, err := config.Load()
	Expect(err).NotTo(HaveOccurred())
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.DB.DSN = dsn
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
	ctx, cancel := context.WithCancel(context.Background())
	Expect(app.Migrate(ctx, cfg, log)).To(Succeed())
	a, err := app.New(ctx, cfg, log)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(testkit.RemoveBucket, context.Background(), cfg.Blob)
	addr, err := a.Listen()
	Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
		a.Close()
	})
	baseURL = "http://" + addr.String()
	natsPrefix = cfg.NATS.Prefix
	client = testkit.NewAPI("http://"+addr.String(), api.OpenAPI)
	Eventually(func() int { return client.Do("GET", "/readyz", "", nil).Status }).Should(Equal(200))
})
