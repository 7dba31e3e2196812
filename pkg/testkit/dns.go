package testkit

import (
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"golang.org/x/net/dns/dnsmessage"
)

// DNS is a tiny DNS server on 127.0.0.1 (UDP) that answers A, AAAA and TXT questions from what
// a spec published; every other name is NXDOMAIN. It stands in for the internet's DNS: domain
// verification reads TXT records from it, and outbound clients pointed at it (DNSServer) resolve
// names to the addresses a spec chose, such as a public-looking name that resolves to a private
// address.
type DNS struct {
	conn  net.PacketConn
	mu    sync.Mutex
	txt   map[string][]string
	addrs map[string][]netip.Addr
}

// StartDNS starts a DNS server that stops when the spec or container that started it ends.
func StartDNS() *DNS {
	ginkgo.GinkgoHelper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	d := &DNS{conn: conn, txt: map[string][]string{}, addrs: map[string][]netip.Addr{}}
	go d.serve()
	ginkgo.DeferCleanup(conn.Close)
	return d
}

// Addr is the server's "host:port".
func (d *DNS) Addr() string { return d.conn.LocalAddr().String() }

// SetTXT publishes values at name (without the trailing dot).
func (d *DNS) SetTXT(name string, values ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.txt[fqdn(name)] = values
}

// SetAddrs publishes the addresses of name: IPv4 ones as A records, IPv6 ones as AAAA.
func (d *DNS) SetAddrs(name string, addrs ...netip.Addr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs[fqdn(name)] = addrs
}

func fqdn(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) + "." }

func (d *DNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if msg, ok := d.answer(buf[:n]); ok {
			_, _ = d.conn.WriteTo(msg, from)
		}
	}
}

func (d *DNS) answer(query []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	name := strings.ToLower(q.Name.String())
	d.mu.Lock()
	txt, hasTXT := d.txt[name]
	addrs, hasAddrs := d.addrs[name]
	d.mu.Unlock()
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RCode: dnsmessage.RCodeSuccess}
	if !hasTXT && !hasAddrs {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}
	switch q.Type {
	case dnsmessage.TypeTXT:
		for _, v := range txt {
			_ = b.TXTResource(rr, dnsmessage.TXTResource{TXT: []string{v}})
		}
	case dnsmessage.TypeA:
		for _, a := range addrs {
			if a.Is4() {
				_ = b.AResource(rr, dnsmessage.AResource{A: a.As4()})
			}
		}
	case dnsmessage.TypeAAAA:
		for _, a := range addrs {
			if a.Is6() {
				_ = b.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: a.As16()})
			}
		}
	}
	msg, err := b.Finish()
	return msg, err == nil
}
