package app_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/identity-svc/api"
	"github.com/motionstudio/platform/services/identity-svc/internal/app"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
)

func TestApp(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "identity-svc")
}

const (
	clientID     = "render-worker"
	clientSecret = "render-worker-secret-0123456789"
	tokenLimit   = 5
)

var (
	cfg    config.Config
	client *testkit.API
)

var _ = BeforeSuite(func() {
	_, dsn := testkit.NewDatabase("identity_app")
	rdb, redisPrefix := testkit.Redis("identity_app")
	bus := testkit.Bus("identity_app")

	var err error
	cfg, err = config.Load()
	Expect(err).NotTo(HaveOccurred())
	seed := make([]byte, ed25519.SeedSize)
	_, _ = rand.Read(seed)
	cfg.HTTP.Addr = "127.0.0.1:0"
	// Stopping at the suite's end waits neither for load balancers nor for running handlers.
	cfg.HTTP.ShutdownDelay, cfg.NATS.ShutdownGrace = 0, 0
	cfg.DB.DSN = dsn
	// A statement on the pool from a goroutine holding a transaction panics (see testkit.NewDatabase).
	cfg.DB.GuardTransactions = true
	cfg.Redis.URL = fmt.Sprintf("redis://%s/%d", rdb.Options().Addr, rdb.Options().DB)
	cfg.Redis.KeyPrefix = redisPrefix
	cfg.NATS.URL = testkit.NATSURL()
	cfg.NATS.Prefix = bus.Subject("")
	cfg.SigningKey = base64.StdEncoding.EncodeToString(seed)
	cfg.SigningKeyFile = ""
	cfg.GenerateSigningKey = false
	cfg.ServiceClients = clientID + ":" + clientSecret
	cfg.ServiceClientAudiences = clientID + "=" + cfg.Audience + " content agentteam"
	cfg.TokenRateLimit = tokenLimit
	cfg.HTTP.TrustedProxies = []string{"127.0.0.0/8"}
	configureTestIdP(&cfg)
	cfg.Auth.RefreshReuseGrace = 0
	cfg.Auth.LoginPerIP, cfg.Auth.RegisterPerIP, cfg.Auth.LoginPerAccount = authIPLimit, authIPLimit, authAccountLimit
	cfg.Auth.LoginPerAccountAllAddresses = authAccountAllLimit

	configureAccounts(&cfg)
	configureBilling(&cfg)
	log := slog.New(slog.NewJSONHandler(io.MultiWriter(GinkgoWriter, serviceLog), nil))
	ctx, cancel := context.WithCancel(context.Background())
	Expect(app.Migrate(ctx, cfg, log)).To(Succeed())
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
	serviceBase = "http://" + addr.String()
	client = testkit.NewAPI(serviceBase, api.OpenAPI)
	Eventually(func() int { return client.Do("GET", "/readyz", "", nil).Status }).Should(Equal(200))
})

// admin runs the operator CLI in-process and decodes its JSON answer.
func admin(args ...string) map[string]any {
	GinkgoHelper()
	var out bytes.Buffer
	Expect(app.Admin(context.Background(), cfg, slog.New(slog.DiscardHandler), args, &out)).To(Succeed())
	var m map[string]any
	Expect(json.Unmarshal(out.Bytes(), &m)).To(Succeed())
	return m
}
