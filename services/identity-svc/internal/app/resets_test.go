package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/identity-svc/api"
	"github.com/motionstudio/platform/services/identity-svc/internal/app"
)

// startApp runs another identity process on the suite's database, bus and Redis with
// resetWorker as its PASSWORD_RESET_WORKER, and returns its API client and a stop function that
// ends Run and closes the App.
func startApp(resetWorker bool) (*testkit.API, func()) {
	GinkgoHelper()
	c := cfg
	c.Auth.ResetWorker = resetWorker
	c.Auth.ResetPoll = 100 * time.Millisecond
	log := slog.New(slog.NewJSONHandler(io.MultiWriter(GinkgoWriter, serviceLog), nil))
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, c, log)
	Expect(err).NotTo(HaveOccurred())
	addr, err := a.Listen()
	Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
		a.Close()
	}
	DeferCleanup(stop)
	api := testkit.NewAPI("http://"+addr.String(), api.OpenAPI)
	Eventually(func() int { return api.Do("GET", "/readyz", "", nil).Status }).WithTimeout(5 * time.Second).Should(Equal(200))
	return api, stop
}

// resetJobsOf counts the password-reset requests still waiting for the addresses.
func resetJobsOf(emails ...string) int64 {
	GinkgoHelper()
	var n int64
	Expect(testDB().Raw("SELECT count(*) FROM password_reset_jobs WHERE email IN ?", emails).Scan(&n).Error).To(Succeed())
	return n
}

var _ = Describe("a password reset accepted by a process that stops before answering it", func() {
	It("is answered by a process started afterwards: the known account gets its link, the unknown one nothing", func() {
		c := newAuthClient()
		acc := authRegister(c)
		nobody := "nobody-" + uuid.NewString() + "@example.test"

		first, stop := startApp(false)
		for _, email := range []string{acc.Email, nobody} {
			r := first.Do("POST", "/v1/auth/password/reset/request", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": email},
				"X-Forwarded-For", authIP())
			Expect(r.Status).To(Equal(http.StatusAccepted), email)
		}
		stop()

		startApp(true)
		Eventually(func() []sentMessage { return sentMessages(acc.Email, "reset") }).WithTimeout(10 * time.Second).Should(HaveLen(1))
		Eventually(func() int64 { return resetJobsOf(acc.Email, nobody) }).WithTimeout(10*time.Second).Should(BeZero(),
			"answered requests are deleted, the unknown account's too")
		Expect(sentMessages(nobody, "reset")).To(BeEmpty())
	})

})
