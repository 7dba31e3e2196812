// Package domaincheck looks up custom-domain challenges on the internet: DNS TXT records
// through a resolver (the system's, or a configured DNS server) and challenge files over HTTP
// through the SSRF-safe outbound client. It implements tenant.Checker.
package domaincheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
)

// Checker implements tenant.Checker.
type Checker struct {
	resolver *net.Resolver
	client   *outbound.Client
	httpAddr string
}

// Options configure a Checker.
type Options struct {
	// DNSServer ("host:port") answers TXT lookups, and resolves the host of the challenge-file
	// check, instead of the system resolver when set.
	DNSServer string
	// HTTPAddr ("host:port") is connected to instead of the domain for challenge files, with
	// the domain still sent as Host; for local development and tests only.
	HTTPAddr string
	// AllowLoopback lets the file check reach loopback addresses (local development, tests).
	AllowLoopback bool
}

// New returns a Checker.
func New(o Options) *Checker {
	client := outbound.New(outbound.Options{
		Timeout: 5 * time.Second, MaxBodyBytes: 4096, AllowLoopback: o.AllowLoopback, UserAgent: "motionstudio-domain-check",
		DNSServer: o.DNSServer,
	})
	return &Checker{resolver: outbound.Resolver(o.DNSServer), client: client, httpAddr: o.HTTPAddr}
}

// TXT returns the TXT values at name; a name without records answers none and no error. Other
// lookup failures are returned wrapped.
func (c *Checker) TXT(ctx context.Context, name string) ([]string, error) {
	values, err := c.resolver.LookupTXT(ctx, name)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("domaincheck: txt %s: %w", name, err)
	}
	return values, nil
}

// File fetches http://<domain>/.well-known/motionstudio-challenge.txt and returns its body;
// an answer other than 200 is an error.
func (c *Checker) File(ctx context.Context, domain string) (string, error) {
	host := domain
	if c.httpAddr != "" {
		host = c.httpAddr
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+tenant.ChallengePath, nil)
	if err != nil {
		return "", fmt.Errorf("domaincheck: file %s: %w", domain, err)
	}
	req.Host = domain
	resp, err := c.client.Do(ctx, req)
	if err != nil {
		return "", fmt.Errorf("domaincheck: file %s: %w", domain, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("domaincheck: file %s: status %d", domain, resp.StatusCode)
	}
	return string(resp.Body), nil
}
