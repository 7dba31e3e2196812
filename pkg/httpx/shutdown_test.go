package httpx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/logx"
)

// loadOutcomes counts what the clients of a load run saw.
type loadOutcomes struct {
	mu sync.Mutex
	// ok counts 2xx answers; okDuringDelay those that came after /readyz first answered 503.
	ok, okDuringDelay int
	// refused counts connections refused; firstRefused is when the first one was.
	refused      int
	firstRefused time.Time
	// lost lists every other outcome: an error status, a reset or an unexpected error.
	lost []string
	// notReady is when /readyz first answered 503, and with what body.
	notReady     time.Time
	notReadyBody string
}

func (o *loadOutcomes) answered(status int, err error) (stop bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err == nil && status/100 == 2:
		o.ok++
		if !o.notReady.IsZero() {
			o.okDuringDelay++
		}
	case errors.Is(err, syscall.ECONNREFUSED):
		o.refused++
		if o.firstRefused.IsZero() {
			o.firstRefused = time.Now()
		}
		return true
	case err != nil:
		o.lost = append(o.lost, err.Error())
	default:
		o.lost = append(o.lost, fmt.Sprintf("status %d", status))
	}
	return false
}

func (o *loadOutcomes) sawNotReady(body string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.notReady.IsZero() {
		o.notReady, o.notReadyBody = time.Now(), body
	}
}

func (o *loadOutcomes) okCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ok
}

// get requests url and reads the whole answer.
func get(client *http.Client, url string) (int, string, error) {
	res, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

var _ = Describe("shutting down under load", func() {
	const (
		clients      = 8
		perClientCap = 400
		delay        = 300 * time.Millisecond
	)

	It("turns not ready first and answers every accepted request, then refuses connections", func() {
		srv, err := httpx.New(httpx.Options{
			Service: "load",
			Config:  httpx.Config{Addr: "127.0.0.1:0", ShutdownDelay: delay, RequestTimeout: 5 * time.Second, ShutdownTimeout: 10 * time.Second},
			Logger:  logx.New(GinkgoWriter, "load", "info"),
		})
		Expect(err).NotTo(HaveOccurred())
		srv.Echo.GET("/work", func(c echo.Context) error {
			// The work takes 50 to 200 ms and does not watch the request's context.
			time.Sleep(50*time.Millisecond + rand.N(150*time.Millisecond))
			return c.String(http.StatusOK, "done")
		})
		addr, err := srv.Listen()
		Expect(err).NotTo(HaveOccurred())
		base := "http://" + addr.String()
		ctx, stop := context.WithCancel(context.Background())
		DeferCleanup(stop)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ctx) }()

		var out loadOutcomes
		// Clients keep their connections alive, like a load balancer's upstream pool, so a new
		// connection is dialled only once the server closed the previous one.
		transport := &http.Transport{MaxIdleConnsPerHost: clients}
		DeferCleanup(transport.CloseIdleConnections)
		client := &http.Client{Transport: transport, Timeout: 15 * time.Second}
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				defer GinkgoRecover()
				for range perClientCap {
					status, _, err := get(client, base+"/work")
					if out.answered(status, err) {
						return
					}
				}
			})
		}
		probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
		wg.Go(func() {
			defer GinkgoRecover()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for range tick.C {
				status, body, err := get(probe, base+"/readyz")
				if err != nil {
					return
				}
				if status == http.StatusServiceUnavailable {
					out.sawNotReady(body)
				}
			}
		})
		loadDone := make(chan struct{})
		go func() {
			wg.Wait()
			close(loadDone)
		}()

		Eventually(out.okCount).WithTimeout(10 * time.Second).Should(BeNumerically(">=", 3*clients))
		stop()
		Eventually(loadDone).WithTimeout(20 * time.Second).Should(BeClosed())
		Eventually(served).Should(Receive(BeNil()))

		out.mu.Lock()
		defer out.mu.Unlock()
		AddReportEntry("outcomes", fmt.Sprintf("ok=%d ok_while_not_ready=%d refused=%d lost=%d not_ready_before_refused_by=%s",
			out.ok, out.okDuringDelay, out.refused, len(out.lost), out.firstRefused.Sub(out.notReady)))
		Expect(out.lost).To(BeEmpty(), "every accepted request is answered with a 2xx")
		Expect(out.notReadyBody).To(MatchJSON(`{"status":"shutting_down"}`))
		Expect(out.notReady).NotTo(BeZero())
		Expect(out.firstRefused).To(BeTemporally(">", out.notReady), "/readyz turns 503 before the listener closes")
		Expect(out.okDuringDelay).To(BeNumerically(">", 0), "requests are still served while not ready")
		Expect(out.refused).To(Equal(clients), "every client is refused once the server stopped accepting")
	})
})
