package testkit

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/onsi/ginkgo/v2"
)

// The SSRF sweep's cases, shared by every kind of user-given destination (webhooks, MCP
// servers, model connections). They assume a suite that allows loopback, as the app suites do
// for their local receivers; pkg/outbound covers loopback with the allowance off.

// Messages of the outbound URL check, after the field name.
const (
	SSRFPrivate   = "must not point to a private, loopback or reserved address"
	SSRFDecimalV4 = "must write an IPv4 address as four decimal numbers, like 203.0.113.7"
)

// SSRFRefusedURLs are table entries (url, message) that registration refuses.
func SSRFRefusedURLs() []ginkgo.TableEntry {
	return []ginkgo.TableEntry{
		ginkgo.Entry("link-local", "http://169.254.10.20/hook", SSRFPrivate),
		ginkgo.Entry("the metadata address", "http://169.254.169.254/latest/meta-data/", SSRFPrivate),
		ginkgo.Entry("the GCP metadata name", "http://metadata.google.internal/computeMetadata/v1/", SSRFPrivate),
		ginkgo.Entry("a single-label name", "http://metadata/hook", SSRFPrivate),
		ginkgo.Entry("IPv6 link-local", "http://[fe80::1]/hook", SSRFPrivate),
		ginkgo.Entry("private 10/8", "http://10.0.0.1/hook", SSRFPrivate),
		ginkgo.Entry("private 172.16/12", "http://172.16.0.1/hook", SSRFPrivate),
		ginkgo.Entry("private 192.168/16", "http://192.168.1.1/hook", SSRFPrivate),
		ginkgo.Entry("IPv6 unique local", "http://[fd00::1]/hook", SSRFPrivate),
		ginkgo.Entry("decimal metadata address", "http://2852039166/latest/meta-data/", SSRFPrivate),
		ginkgo.Entry("octal private address", "http://012.0.0.1/hook", SSRFPrivate),
		ginkgo.Entry("hex metadata address", "http://0xa9.0xfe.0xa9.0xfe/", SSRFPrivate),
		ginkgo.Entry("IPv4-mapped IPv6 private address", "http://[::ffff:10.0.0.1]/hook", SSRFPrivate),
		ginkgo.Entry("decimal loopback", "http://2130706433/hook", SSRFDecimalV4),
		ginkgo.Entry("octal loopback", "http://0177.0.0.1/hook", SSRFDecimalV4),
	}
}

// SSRFResolvedAddrs are table entries (address) a public-looking name may resolve to after it
// passed registration; connecting to each is refused.
func SSRFResolvedAddrs() []ginkgo.TableEntry {
	return []ginkgo.TableEntry{
		ginkgo.Entry("the metadata address", "169.254.169.254"),
		ginkgo.Entry("link-local", "169.254.0.1"),
		ginkgo.Entry("private 10/8", "10.20.30.40"),
		ginkgo.Entry("private 192.168/16", "192.168.0.10"),
		ginkgo.Entry("IPv6 unique local", "fd00::10"),
		ginkgo.Entry("IPv6 link-local", "fe80::10"),
		ginkgo.Entry("an IPv4-mapped private address", "::ffff:172.16.5.5"),
	}
}

// SSRFRedirectTargets are table entries (location) a redirecting destination may send the
// client to; none is followed. SSRFInside stands for a loopback server the suite may reach,
// and inside.example.test is meant to resolve to a private address.
func SSRFRedirectTargets() []ginkgo.TableEntry {
	return []ginkgo.TableEntry{
		ginkgo.Entry("to the metadata address", "http://169.254.169.254/latest/meta-data/"),
		ginkgo.Entry("to a private address", "http://10.0.0.1/hook"),
		ginkgo.Entry("to a name resolving to a private address", "http://inside.example.test/hook"),
		ginkgo.Entry("to an allowed loopback server", SSRFInside+"/hook"),
	}
}

// SSRFInside is replaced, in a redirect location, by the URL of a loopback server.
const SSRFInside = "INSIDE"

// SSRFName is a DNS name unique to kind and addr, for a spec that publishes addr under it.
func SSRFName(kind, addr string) string {
	return kind + "-" + strings.NewReplacer(".", "-", ":", "-").Replace(addr) + ".example.test"
}

// Redirector is a server on 127.0.0.1 that redirects every request, and counts what it and the
// loopback server standing for SSRFInside received.
type Redirector struct {
	URL      string
	Hits     atomic.Int64
	Followed atomic.Int64
}

// NewRedirector starts a Redirector answering 302 to location (SSRFInside replaced by its
// loopback server's URL) and publishes inside.example.test on dns as a private address. Both
// servers stop when the spec ends.
func NewRedirector(dns *DNS, location string) *Redirector {
	r := &Redirector{}
	inside := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { r.Followed.Add(1) }))
	ginkgo.DeferCleanup(inside.Close)
	dns.SetAddrs("inside.example.test", netip.MustParseAddr("10.0.0.1"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.Hits.Add(1)
		http.Redirect(w, req, strings.Replace(location, SSRFInside, inside.URL, 1), http.StatusFound)
	}))
	ginkgo.DeferCleanup(srv.Close)
	r.URL = srv.URL
	return r
}
