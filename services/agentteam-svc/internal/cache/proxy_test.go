package cache_test

import (
	"io"
	"net"
	"net/url"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// proxy forwards TCP connections to Postgres until it is cut, which breaks every connection
// through it and refuses new ones until it is restored, as an unreachable database does.
type proxy struct {
	addr, target string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

// newProxy starts a proxy to the suite's database and returns it with a DSN through it; it is
// closed when the spec ends.
func newProxy() (*proxy, string) {
	GinkgoHelper()
	u, err := url.Parse(dsn)
	Expect(err).NotTo(HaveOccurred())
	p := &proxy{target: u.Host}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	p.addr = ln.Addr().String()
	p.serve(ln)
	DeferCleanup(p.cut)
	u.Host = p.addr
	return p, u.String()
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}()
}

// cut closes the listener and every connection through it.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// restore accepts connections again on the same address.
func (p *proxy) restore() {
	GinkgoHelper()
	ln, err := net.Listen("tcp", p.addr)
	Expect(err).NotTo(HaveOccurred())
	p.serve(ln)
}
