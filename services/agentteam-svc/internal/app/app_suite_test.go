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
)

var _ = BeforeSuite(func() {
	var dsn string
	db, dsn = testkit.NewDatabase("agentteam_app")
	bus := testkit.Bus("agentteam_app")
	tokens = testkit.NewIssuer()

	cfg, err := config.Load()
	Expect(err).NotTo(HaveOccurred())
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.DB.DSN = dsn
	cfg.NATS.URL = testkit.NATSURL()
	cfg.NATS.Prefix = bus.Subject("")
	cfg.Auth.JWKSURL = tokens.JWKSURL()
	cfg.Auth.Issuer = tokens.IssuerName()
	suiteCfg = cfg

	suiteCfg = cfg

	Expect(app.Migrate(context.Background(), cfg, slog.New(slog.NewJSONHandler(GinkgoWriter, nil)))).To(Succeed())
	client = serve(cfg)
})

// serve runs an app with cfg until the suite or the spec that called it ends, and returns a
// contract-checking client of it once it is ready.
func serve(cfg config.Config) *testkit.API {
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
	c := testkit.NewAPI("http://"+addr.String(), api.OpenAPI)
	Eventually(func() int { return c.Do("GET", "/readyz", "", nil).Status }).Should(Equal(200))
	return c
}
