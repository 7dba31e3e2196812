package testkit

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// TCPProxy forwards TCP connections from 127.0.0.1 to a target, and can cut them to simulate a
// dependency going away (a database restart, a network partition) and restore them, or slow
// them to simulate a dependency under load.
type TCPProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cut    bool
	closed bool
	delay  time.Duration
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// NewTCPProxy listens on 127.0.0.1:0 and forwards each connection to target. It is closed when
// the spec or suite ends.
func NewTCPProxy(target string) *TCPProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	p := &TCPProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	ginkgo.DeferCleanup(p.close)
	return p
}

// Addr is the proxy's host:port.
func (p *TCPProxy) Addr() string { return p.ln.Addr().String() }

// Cut resets every live connection and resets new ones until Restore.
func (p *TCPProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		reset(c)
	}
	clear(p.conns)
}

// Restore forwards new connections again.
func (p *TCPProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// Slow holds everything the target sends for d before passing it on, on live connections and
// new ones, so that each request and its answer take d longer; zero forwards at once again.
func (p *TCPProxy) Slow(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

func (p *TCPProxy) slowness() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

func (p *TCPProxy) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.Cut()
	p.wg.Wait()
}

// answer copies what server sends to client, each read held for the proxy's slowness.
func (p *TCPProxy) answer(client, server net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			time.Sleep(p.slowness())
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// reset closes c with an RST, so the peer sees a failure at once rather than a clean EOF.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func (p *TCPProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p.wg.Add(1)
		go p.forward(client)
	}
}

// track registers conns as live unless the proxy is cut or closed, in which case it resets them.
func (p *TCPProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.closed {
		for _, c := range conns {
			reset(c)
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *TCPProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

func (p *TCPProxy) forward(client net.Conn) {
	defer p.wg.Done()
	if !p.track(client) {
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		p.untrack(client)
		reset(client)
		return
	}
	if !p.track(server) {
		p.untrack(client)
		reset(client)
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(server, client)
		done <- struct{}{}
	}()
	go func() {
		p.answer(client, server)
		done <- struct{}{}
	}()
	<-done
	p.untrack(client, server)
	_ = client.Close()
	_ = server.Close()
	<-done
}
