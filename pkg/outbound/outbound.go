// Package outbound is the one HTTP client for URLs that users give the platform (webhooks, MCP
// servers, model connections, image fetches). It refuses to connect to private, loopback,
// link-local and other special-purpose addresses, checked after DNS resolution at connect time,
// never follows redirects, bounds every phase with a timeout and caps the response body.
// Refused destinations and bad URLs are apperr Invalid; unreachable or slow targets are
// Unavailable.
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
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"

	"github.com/motionstudio/platform/pkg/apperr"
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
	return &Client{
		http: &http.Client{Transport: transport, Timeout: opts.Timeout, CheckRedirect: noRedirect},
		sdk: &http.Client{
			Transport:     &cappedTransport{next: transport, maxBody: opts.MaxBodyBytes, agent: opts.UserAgent},
			Timeout:       opts.Timeout,
			CheckRedirect: noRedirect,
		},
		maxBody: opts.MaxBodyBytes,
		agent:   opts.UserAgent,
	}
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
	resp, err := c.http.Do(req)
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
// https URL with a host and no user info, and a literal IP address (or a localhost name) must
// pass the same rules the client applies when it connects. It returns Invalid with a message
// fit for the user. Names are resolved only when the client connects, so passing here does
// not mean a request will be allowed.
func ValidateURL(raw string, allowLoopback bool) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return apperr.Invalidf("url is not a valid URL")
	}
	if err := checkURL(u); err != nil {
		return err
	}
	host := u.Hostname()
	if addr, err := netip.ParseAddr(host); err == nil {
		if err := newGuard(allowLoopback).check(addr); err != nil {
			return apperr.Wrap(err, apperr.Invalid, "refused_destination", "url must not point to a private, loopback or reserved address")
		}
		return nil
	}
	if !allowLoopback && isLocalhostName(host) {
		return apperr.Wrap(fmt.Errorf("%w: %s", ErrRefusedDestination, host), apperr.Invalid, "refused_destination", "url must not point to a private, loopback or reserved address")
	}
	return nil
}

// checkURL enforces the shape every outbound URL must have.
func checkURL(u *url.URL) error {
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

// isLocalhostName reports names that always resolve to loopback (RFC 6761).
func isLocalhostName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
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
