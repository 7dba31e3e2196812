// Package outbound is the one HTTP client for URLs that users give the platform (webhooks, MCP
// servers, model connections, image fetches). It refuses to connect to private, loopback,
// link-local and other special-purpose addresses, checked after DNS resolution at connect time,
// never follows redirects, bounds every phase with a timeout and caps the response body.
// Refused destinations and bad URLs are apperr Invalid; unreachable or slow targets are
// Unavailable. A request made under a recording span gets an HTTP client span that names the
// destination by host only (telemetry.Transport).
package outbound

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"code.dny.dev/ssrf"
	"golang.org/x/net/idna"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/telemetry"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxBodyBytes = 1 << 20
)

// ErrRefusedDestination is the cause of every refusal of a destination address; test for it
// with errors.Is.
var ErrRefusedDestination = errors.New("outbound: refused destination")

// ErrBodyTooLarge is returned by reads of a response body from HTTPClient once the target sent
// more than MaxBodyBytes.
var ErrBodyTooLarge = errors.New("outbound: response body larger than the cap")

// Options configure a Client.
type Options struct {
	// Timeout bounds the whole request, body included; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxBodyBytes caps how much of a response body is read; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// AllowLoopback permits 127.0.0.0/8 and ::1; only tests and local development set it.
	AllowLoopback bool
	// UserAgent is sent when the request has no User-Agent of its own.
	UserAgent string
	// DNSServer ("host:port"), when set, resolves host names instead of the system resolver
	// (see Resolver).
	DNSServer string
}

// Response is a fully read response. Body holds at most MaxBodyBytes; Truncated reports that
// the target sent more.
type Response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
	Truncated  bool
	Duration   time.Duration
}

// Client sends requests to user-given URLs. It is safe for concurrent use.
type Client struct {
	http    *http.Client
	sdk     *http.Client
	maxBody int64
	agent   string
}

// New builds a Client from opts.
func New(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	dialer := &net.Dialer{
		Timeout:   min(opts.Timeout, 5*time.Second),
		KeepAlive: 30 * time.Second,
		Resolver:  Resolver(opts.DNSServer),
		Control:   newGuard(opts.AllowLoopback).control,
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   min(opts.Timeout, 5*time.Second),
		ResponseHeaderTimeout: opts.Timeout,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
	}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	traced := telemetry.Transport(transport)
	return &Client{
		http: &http.Client{Transport: traced, Timeout: opts.Timeout, CheckRedirect: noRedirect},
		sdk: &http.Client{
			Transport:     &cappedTransport{next: traced, maxBody: opts.MaxBodyBytes, agent: opts.UserAgent},
			Timeout:       opts.Timeout,
			CheckRedirect: noRedirect,
		},
		maxBody: opts.MaxBodyBytes,
		agent:   opts.UserAgent,
	}
}

// Resolver returns the resolver that asks server ("host:port") and nothing else, or the system
// resolver when server is empty. A deployment may point outbound clients at a resolver that
// knows no internal names, so cluster-internal hosts do not even resolve; tests point them at a
// local server that resolves names to the addresses a spec chose.
func Resolver(server string) *net.Resolver {
	if server == "" {
		return net.DefaultResolver
	}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, server)
	}}
}

// HTTPClient returns a standard *http.Client with the same address guard, timeouts and
// redirect refusal, for SDKs that take one (model and MCP clients). Its response bodies fail
// with ErrBodyTooLarge once more than MaxBodyBytes are read. Its errors are the transport's own;
// Classify maps them to apperr kinds. The same client is returned on every call.
func (c *Client) HTTPClient() *http.Client { return c.sdk }

// Classify maps an error of a request sent with HTTPClient to Invalid (a refused destination)
// or Unavailable (unreachable, timed out), as Do does; other errors are returned unchanged.
func Classify(err error, u *url.URL) error {
	if err == nil {
		return nil
	}
	if _, ok := apperr.As(err); ok {
		return err
	}
	return classify(err, u)
}

// Reasons Reason gives, the texts a user may be shown for a failed request.
const (
	ReasonRefused      = "The server's address is not allowed."
	ReasonTimeout      = "timeout"
	ReasonConnRefused  = "connection refused"
	ReasonConnReset    = "connection reset"
	ReasonNotFound     = "host not found"
	ReasonTLS          = "TLS handshake failed"
	ReasonBodyTooLarge = "response body too large"
	ReasonFailed       = "connection failed"
)

// Reason says in a few words why a request sent with Do or HTTPClient failed, fit to show the
// user who gave the URL: it never carries the resolved address, the port or the text of the
// underlying error, so a delivery log cannot be used to map internal names. Log err itself
// server-side for the detail. Reason returns "" for a nil error.
func Reason(err error) string {
	var (
		netErr  net.Error
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		recErr  tls.RecordHeaderError
		alert   tls.AlertError
	)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrRefusedDestination):
		return ReasonRefused
	case errors.Is(err, ErrBodyTooLarge):
		return ReasonBodyTooLarge
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ReasonTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonConnRefused
	case errors.Is(err, syscall.ECONNRESET):
		return ReasonConnReset
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return ReasonNotFound
	case errors.As(err, &certErr), errors.As(err, &recErr), errors.As(err, &alert):
		return ReasonTLS
	}
	return ReasonFailed
}

// cappedTransport checks each request's URL, sets the user agent and caps response bodies.
type cappedTransport struct {
	next    http.RoundTripper
	maxBody int64
	agent   string
}

func (t *cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkURL(req.URL); err != nil {
		return nil, err
	}
	if t.agent != "" && req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", t.agent)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: t.maxBody}
	return resp, nil
}

// cappedBody reads at most left bytes and then fails with ErrBodyTooLarge if more follow.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, ErrBodyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// Do sends req and reads the response body up to the cap. A redirect is returned as it is, not
// followed. Any status is a successful exchange; the caller judges it. Do returns Invalid when
// the URL is not an absolute http(s) URL or its address is refused (the error wraps
// ErrRefusedDestination), and Unavailable when the target cannot be reached or does not answer
// within the timeout.
func (c *Client) Do(ctx context.Context, req *http.Request) (*Response, error) {
	if err := checkURL(req.URL); err != nil {
		return nil, err
	}
	req = req.WithContext(ctx)
	if c.agent != "" && req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", c.agent)
	}
	start := time.Now()
	resp, err := c.http.Do(req) // #nosec G704 -- this is the SSRF-safe client: its dialer refuses private, loopback and link-local addresses
	if err != nil {
		return nil, classify(err, req.URL)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return nil, classify(err, req.URL)
	}
	truncated := int64(len(body)) > c.maxBody
	if truncated {
		body = body[:c.maxBody]
	}
	return &Response{
		StatusCode: resp.StatusCode,
		Header:     resp.Header,
		Body:       body,
		Truncated:  truncated,
		Duration:   time.Since(start),
	}, nil
}

// ValidateURL is the create-time check for a user-given URL: it must be an absolute http or
// https URL with a host and no user info; an IP address in the host, in any form a browser or
// inet_aton reads (2130706433, 0177.0.0.1, 0x7f.1, [::ffff:127.0.0.1]), must pass the same
// rules the client applies when it connects, and must then be written as four decimal numbers
// or in brackets; and the host must not be a name reserved for local or private networks
// (localhost, a single label such as "metadata", or a name under .localhost, .local, .internal
// or .home.arpa, such as metadata.google.internal). It returns Invalid with a message fit for
// the user. Other names are resolved only when the client connects, so passing here does not
// mean a request will be allowed.
func ValidateURL(raw string, allowLoopback bool) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return apperr.Invalidf("url is not a valid URL")
	}
	if err := checkShape(u); err != nil {
		return err
	}
	host, err := asciiHost(u.Hostname())
	if err != nil {
		return err
	}
	addr, literal := hostAddr(host)
	if literal {
		if err := newGuard(allowLoopback).check(addr); err != nil {
			return refused(err)
		}
	}
	if err := checkHost(host); err != nil || literal {
		return err
	}
	if isLocalhostName(host) {
		if allowLoopback {
			return nil
		}
		return refused(fmt.Errorf("%w: %s", ErrRefusedDestination, host))
	}
	if isPrivateName(host) {
		return refused(fmt.Errorf("%w: %s", ErrRefusedDestination, host))
	}
	return nil
}

func refused(err error) error {
	return apperr.Wrap(err, apperr.Invalid, "refused_destination", "url must not point to a private, loopback or reserved address")
}

// checkURL enforces the shape every outbound URL must have, on every request.
func checkURL(u *url.URL) error {
	if err := checkShape(u); err != nil {
		return err
	}
	host, err := asciiHost(u.Hostname())
	if err != nil {
		return err
	}
	return checkHost(host)
}

// asciiHost is the host net/http connects to: a name with non-ASCII characters is mapped
// (UTS #46, as browsers do) to its ASCII form first, so "１２７.０.０.１" is judged as the
// 127.0.0.1 it becomes.
func asciiHost(host string) (string, error) {
	for i := range len(host) {
		if host[i] >= utf8.RuneSelf {
			ascii, err := idna.Lookup.ToASCII(host)
			if err != nil {
				return "", apperr.Wrap(err, apperr.Invalid, "invalid_host", "url host is not a valid host name")
			}
			return ascii, nil
		}
	}
	return host, nil
}

// checkShape enforces an absolute http(s) URL with a host and no user info.
func checkShape(u *url.URL) error {
	switch {
	case u == nil:
		return apperr.Invalidf("url is required")
	case u.Scheme != "http" && u.Scheme != "https":
		return apperr.Invalidf("url must start with http:// or https://")
	case u.User != nil:
		return apperr.Invalidf("url must not contain a user name or password")
	case u.Hostname() == "":
		return apperr.Invalidf("url must include a host")
	}
	return nil
}

// checkHost refuses hosts whose meaning depends on who reads them: an IPv4 address written
// other than as four decimal numbers (resolvers disagree on "0177.0.0.1" and "2130706433"; some
// read 127.0.0.1, others look the name up), a host ending in a number that is no address, and
// an IPv6 zone, which names a network interface of this machine. The errors wrap
// ErrRefusedDestination.
func checkHost(host string) error {
	if strings.Contains(host, ":") {
		if addr, err := netip.ParseAddr(host); err == nil && addr.Zone() != "" {
			return apperr.Wrap(fmt.Errorf("%w: %s", ErrRefusedDestination, host), apperr.Invalid, "refused_destination",
				"url must not name a network interface")
		}
		return nil
	}
	if !endsInNumber(host) {
		return nil
	}
	addr, ok := parseIPv4Number(host)
	switch {
	case !ok:
		return apperr.Wrap(fmt.Errorf("%w: %s", ErrRefusedDestination, host), apperr.Invalid, "invalid_host",
			"url host ends in a number but is not an IP address")
	case addr.String() != host:
		return apperr.Wrap(fmt.Errorf("%w: %s", ErrRefusedDestination, host), apperr.Invalid, "invalid_host",
			"url must write an IPv4 address as four decimal numbers, like 203.0.113.7")
	}
	return nil
}

// hostAddr is the address a URL host names literally, in any form browsers accept.
func hostAddr(host string) (netip.Addr, bool) {
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr, true
	}
	if endsInNumber(host) {
		return parseIPv4Number(host)
	}
	return netip.Addr{}, false
}

// endsInNumber reports whether the host's last label (ignoring one trailing dot) is a number
// in decimal or 0x hex, the WHATWG URL standard's test for "this host is an IPv4 address".
func endsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
	}
	last := labels[len(labels)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	if len(last) >= 2 && (last[:2] == "0x" || last[:2] == "0X") {
		return strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
	}
	return false
}

// parseIPv4Number reads host as the WHATWG URL standard's IPv4 parser (and inet_aton) do: one
// to four parts separated by dots, each decimal, 0-prefixed octal or 0x-prefixed hex, the last
// part filling the bytes the others left.
func parseIPv4Number(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums []uint64
	for _, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums = append(nums, n)
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true // #nosec G115 -- v holds 32 bits; each conversion takes one byte of it
}

func parseIPv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil || n > 1<<32 {
		return 0, false
	}
	return n, true
}

// isLocalhostName reports names that always resolve to loopback (RFC 6761).
func isLocalhostName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// privateSuffixes are the domains set aside for names that only mean something inside a
// network: multicast DNS (RFC 6762), ICANN's private-use .internal (2024, where
// metadata.google.internal lives) and home networks (RFC 8375).
var privateSuffixes = []string{".local", ".internal", ".home.arpa"}

// isPrivateName reports names only a private network resolves: a single label, which the
// resolver completes with the local search domains ("metadata", "redis"), or a name under a
// private-use domain.
func isPrivateName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if !strings.Contains(h, ".") {
		return true
	}
	for _, s := range privateSuffixes {
		if strings.HasSuffix(h, s) || h == s[1:] {
			return true
		}
	}
	return false
}

// classify maps a transport failure to an apperr kind, keeping the cause for errors.Is.
func classify(err error, u *url.URL) error {
	cause := fmt.Errorf("outbound: %s %s: %w", u.Scheme, u.Host, err)
	if errors.Is(err, ErrRefusedDestination) {
		return apperr.Wrap(cause, apperr.Invalid, "refused_destination", "the destination address is not allowed")
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return apperr.Wrap(cause, apperr.Unavailable, "destination_timeout", "the destination did not answer in time")
	}
	return apperr.Wrap(cause, apperr.Unavailable, "destination_unreachable", "the destination could not be reached")
}

// guard decides which resolved addresses the dialer may connect to.
type guard struct {
	ssrf *ssrf.Guardian
}

func newGuard(allowLoopback bool) *guard {
	opts := []ssrf.Option{ssrf.WithAnyPort()}
	if allowLoopback {
		opts = append(opts,
			ssrf.WithAllowedV4Prefixes(netip.MustParsePrefix("127.0.0.0/8")),
			ssrf.WithAllowedV6Prefixes(netip.MustParsePrefix("::1/128")),
		)
	}
	return &guard{ssrf: ssrf.New(opts...)}
}

// control runs after DNS resolution and before connect, so names resolving to refused
// addresses are caught too.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("%w: network %s", ErrRefusedDestination, network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRefusedDestination, address, err)
	}
	return g.check(ap.Addr())
}

// check applies the address rules; an IPv4-mapped IPv6 address is judged as the IPv4 address
// it carries so the loopback allowance and the private ranges apply to it the same way.
func (g *guard) check(addr netip.Addr) error {
	if err := g.ssrf.SafeAddr(addr.Unmap()); err != nil {
		return fmt.Errorf("%w: %w", ErrRefusedDestination, err)
	}
	return nil
}
