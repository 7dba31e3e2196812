package apikey_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/identity-svc/internal/apikey"
)

// FuzzAllowedIPs checks the allowed_ips of API keys on arbitrary lists (one entry a line) and
// client addresses. A refusal is a 400 about allowed_ips; an accepted list has at most 50
// entries, each a canonical address or masked CIDR range that is accepted again unchanged;
// the first address of every range is allowed; and the gateway allows a client address exactly
// when one of the ranges contains it, an IPv4-mapped IPv6 client counting as its IPv4 address.
func FuzzAllowedIPs(f *testing.F) {
	for _, s := range []string{
		"203.0.113.0/24", "203.0.113.7/24\n2001:db8::1", " 10.0.0.1 ", "0.0.0.0/0", "::/0", "::ffff:10.0.0.0/104",
		"::ffff:1.2.3.4", "::ffff:0:0/80", "::ffff:0:0/96", "fe80::1%eth0", "fe80::/10%eth0", "1.2.3.4/33", "1.2.3", "010.0.0.1",
		"2001:db8::/129", "", "\x00", strings.Repeat("1.1.1.1\n", 51),
	} {
		f.Add(s, "203.0.113.9")
		f.Add(s, "::ffff:10.1.2.3")
		f.Add(s, "1.2.3.4")
	}
	f.Fuzz(func(t *testing.T, list, client string) {
		ips := strings.Split(list, "\n")
		out, err := apikey.NormalizeAllowedIPs(ips)
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.Invalid || len(e.Fields) == 0 {
				t.Fatalf("%q: refusal %v is not a 400 naming fields", list, err)
			}
			for _, fe := range e.Fields {
				if fe.Field != "allowed_ips" {
					t.Fatalf("%q: refusal names %s", list, fe.Field)
				}
			}
			return
		}
		if len(out) != len(ips) || len(out) > apikey.MaxAllowedIPs {
			t.Fatalf("%q accepted as %d ranges", list, len(out))
		}
		again, err := apikey.NormalizeAllowedIPs(out)
		if err != nil || !slices.Equal(again, out) {
			t.Fatalf("%q stored as %q, which is read back as %q (%v)", list, out, again, err)
		}
		var ranges []netip.Prefix
		for _, r := range out {
			p, err := netip.ParsePrefix(r)
			if err != nil {
				a, aerr := netip.ParseAddr(r)
				if aerr != nil || a.Zone() != "" {
					t.Fatalf("%q stored the range %q", list, r)
				}
				p = netip.PrefixFrom(a, a.BitLen())
			}
			if p != p.Masked() {
				t.Fatalf("%q stored the unmasked range %q", list, r)
			}
			if !apikey.IPAllowed(out, p.Addr().String()) {
				t.Fatalf("%q: the range %q does not allow its own first address", list, r)
			}
			ranges = append(ranges, p)
		}
		addr, perr := netip.ParseAddr(strings.TrimSpace(client))
		want := len(out) == 0
		for _, p := range ranges {
			if perr == nil && p.Contains(addr.Unmap()) {
				want = true
			}
		}
		if got := apikey.IPAllowed(out, client); got != want {
			t.Fatalf("ranges %q allow %q: %v, want %v", out, client, got, want)
		}
	})
}
