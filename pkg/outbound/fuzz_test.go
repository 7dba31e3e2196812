package outbound_test

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/idna"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbound"
)

// publicAddr is an oracle independent of the guard: the address is none of the kinds the
// platform never calls.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a.Zone() == "" && a.IsGlobalUnicast() && !a.IsPrivate() && !a.IsLoopback() && !a.IsLinkLocalUnicast()
}

// inetAton reads host as inet_aton(3) does, the most permissive reading of a number as an
// IPv4 address that any resolver or client applies: one to four dot-separated parts, each
// decimal, 0-prefixed octal or 0x-prefixed hex, the last filling the remaining bytes.
func inetAton(host string) (netip.Addr, bool) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 0, 32)
		if strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X") {
			n, err = strconv.ParseUint(p[2:], 16, 32)
			if p == "0x" || p == "0X" {
				n, err = 0, nil
			}
		}
		if err != nil || p == "" || strings.ContainsAny(p, "_+-oObB") {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// FuzzValidateURL checks the create-time URL check of webhooks, MCP servers and model
// connections on arbitrary text. It never panics; a refusal is a 400 whose message starts with
// "url"; an accepted URL is an absolute http(s) URL with a host and no user info, its host is
// either an IP address written canonically that no private, loopback or link-local rule covers
// or a name that is not localhost (without the loopback allowance), not a single label and does
// not end in a number; a host that inet_aton would read as an IPv4 address, once mapped to
// ASCII as net/http maps it, is that canonical public address; and whatever is accepted without
// the loopback allowance is accepted with it.
func FuzzValidateURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/v1/receive?x=1",
		"http://93.184.215.14:8443/hook",
		"http://127.0.0.1:8080/",
		"http://2130706433/",
		"http://0177.0.0.1/",
		"http://0x7f.1/",
		"http://0x7f000001/",
		"http://127.1/",
		"http://127.0.0.1./",
		"http://1.2.3.4.5/",
		"http://256.0.0.1/",
		"http://08.0.0.1/",
		"http://0x/",
		"http://[::1]/",
		"http://[::ffff:127.0.0.1]/",
		"http://[::ffff:a9fe:a9fe]/",
		"http://[fe80::1%25eth0]/",
		"http://[2001:4860:4860::8888%25eth0]/",
		"http://[64:ff9b::a00:1]/",
		"http://169.254.169.254/latest/meta-data/",
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://metadata/",
		"http://LOCALHOST./",
		"http://a.localhost/",
		"http://printer.local/",
		"http://example.com.:80/",
		"https://user:pass@example.com/",
		"https://@example.com/",
		"ftp://example.com/",
		"//example.com/",
		"http:/example.com",
		"http://[::1",
		"http://exa mple.com/",
		"http://example.com\x00.evil/",
		"http://\u0131ocalhost/",
		"http://１２７.０.０.１/",
		"  http://example.com/  ",
		"http://example.com:99999/",
		"http://example.com%2F@evil.example/",
		"http://10.0.0.1#@example.com/",
		"http://127.0x1/",
		"http://0x7f.0.0.0x1/",
		"http://017700000001/",
		"http://0x7f.1.0.0x/",
		"http://１２７.0.0.1/",
		"http://①②⑦.0.0.1/",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, allowLoopback bool) {
		err := outbound.ValidateURL(raw, allowLoopback)
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.Invalid || !strings.HasPrefix(e.Message, "url ") {
				t.Fatalf("%q: refusal %v is not a 400 about the url", raw, err)
			}
			return
		}
		if !allowLoopback && outbound.ValidateURL(raw, true) != nil {
			t.Fatalf("%q is accepted without the loopback allowance but refused with it", raw)
		}
		u, perr := url.Parse(strings.TrimSpace(raw))
		if perr != nil {
			t.Fatalf("%q accepted but does not parse: %v", raw, perr)
		}
		host := u.Hostname()
		if (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || host == "" {
			t.Fatalf("%q accepted with scheme %q, user %v, host %q", raw, u.Scheme, u.User, host)
		}
		if strings.ContainsFunc(host, func(r rune) bool { return r >= 0x80 }) {
			ascii, err := idna.Lookup.ToASCII(host)
			if err != nil {
				t.Fatalf("%q accepted a host with no ASCII form: %v", raw, err)
			}
			host = ascii
		}
		if addr, ok := inetAton(host); ok && (addr.String() != host || !publicAddr(addr) && !(allowLoopback && addr.IsLoopback())) {
			t.Fatalf("%q accepted the host %q, which inet_aton reads as %s", raw, host, addr)
		}
		if addr, err := netip.ParseAddr(host); err == nil {
			if addr.String() != host && !strings.Contains(host, ":") {
				t.Fatalf("%q accepted an IPv4 address not written canonically", raw)
			}
			if !publicAddr(addr) && !(allowLoopback && addr.Unmap().IsLoopback()) {
				t.Fatalf("%q accepted the address %s", raw, addr)
			}
			return
		}
		name := strings.ToLower(strings.TrimSuffix(host, "."))
		if !strings.Contains(name, ".") && !(allowLoopback && name == "localhost") {
			t.Fatalf("%q accepted the single-label host %q", raw, host)
		}
		if !allowLoopback && (name == "localhost" || strings.HasSuffix(name, ".localhost")) {
			t.Fatalf("%q accepted a localhost name", raw)
		}
		last := name[strings.LastIndex(name, ".")+1:]
		if last != "" && strings.Trim(last, "0123456789") == "" {
			t.Fatalf("%q accepted a host ending in a number that is no canonical address", raw)
		}
	})
}
