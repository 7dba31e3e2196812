package app_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
)

// challengeFiles is an HTTP server on 127.0.0.1 serving the challenge file per Host.
type challengeFiles struct {
	srv   *httptest.Server
	mu    sync.Mutex
	files map[string]string
}

func startChallengeFiles() *challengeFiles {
	f := &challengeFiles{files: map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		body, ok := f.files[r.Host]
		f.mu.Unlock()
		if !ok || r.URL.Path != "/.well-known/motionstudio-challenge.txt" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body + "\n"))
	}))
	DeferCleanup(f.srv.Close)
	return f
}

func (f *challengeFiles) set(host, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[host] = body
}

var (
	dnsServer *testkit.DNS
	fileHost  *challengeFiles
)

// configureAccounts points the account side of the service at the local stand-ins.
func configureAccounts(c *config.Config) {
	GinkgoHelper()
	dnsServer = testkit.StartDNS()
	fileHost = startChallengeFiles()
	c.Account.OutboundAllowLoopback = true
	c.Account.DomainDNSServer = dnsServer.Addr()
	c.Account.OutboundDNSServer = dnsServer.Addr()
	c.Account.DomainCheckHTTPAddr = strings.TrimPrefix(fileHost.srv.URL, "http://")
	c.Account.DomainCheckInterval = 200 * time.Millisecond
	c.Account.Webhooks.RetrySchedule = "100ms,100ms,100ms,100ms,100ms,100ms,100ms"
	c.Account.Webhooks.SweepInterval = 100 * time.Millisecond
}

// received is one request a receiver got.
type received struct {
	At     time.Time
	Header http.Header
	Body   []byte
}

// reply is what a receiver answers to one request.
type reply struct {
	status     int
	retryAfter string
}

// receiver is a webhook endpoint on 127.0.0.1 that answers the programmed replies in turn
// (then 200) and records every request.
type receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	replies []reply
	got     []received
}

func newReceiver(replies ...reply) *receiver {
	r := &receiver{replies: replies}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{At: time.Now(), Header: req.Header.Clone(), Body: body})
		rep := reply{status: http.StatusOK}
		if len(r.replies) > 0 {
			rep, r.replies = r.replies[0], r.replies[1:]
		}
		r.mu.Unlock()
		if rep.retryAfter != "" {
			w.Header().Set("Retry-After", rep.retryAfter)
		}
		w.WriteHeader(rep.status)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	DeferCleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}
