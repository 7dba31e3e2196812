package tenant

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
)

// Domain verification methods and challenge states.
const (
	MethodDNSTXT   = "DNS_TXT"
	MethodHTTPFile = "HTTP_FILE"

	ChallengePending  = "Pending"
	ChallengeVerified = "Verified"

	// ChallengePrefix is the label under which the DNS TXT record is published.
	ChallengePrefix = "_motionstudio-challenge."
	// ChallengePath is where the HTTP file is served.
	ChallengePath = "/.well-known/motionstudio-challenge.txt"
)

// Challenge is a pending or passed custom-domain verification.
type Challenge struct {
	ID            string
	TenantID      string
	Domain        string
	Method        string
	Token         string
	Status        string
	ExpiresAt     time.Time
	VerifiedAt    *time.Time
	LastCheckedAt *time.Time
	CreatedAt     time.Time
}

// RecordName is the TXT record name, or the URL of the challenge file.
func (c *Challenge) RecordName() string {
	if c.Method == MethodHTTPFile {
		return "http://" + c.Domain + ChallengePath
	}
	return ChallengePrefix + c.Domain
}

// Record is what the tenant must publish, in zone-file form for DNS.
func (c *Challenge) Record() string {
	if c.Method == MethodHTTPFile {
		return fmt.Sprintf("%s containing %s", c.RecordName(), c.Token)
	}
	return fmt.Sprintf("%s. TXT %q", c.RecordName(), c.Token)
}

// Checker looks for a challenge token where the tenant was asked to publish it.
type Checker interface {
	// TXT returns the TXT values at name; no record is an empty answer, not an error.
	TXT(ctx context.Context, name string) ([]string, error)
	// File returns the body of the challenge file of domain.
	File(ctx context.Context, domain string) (string, error)
}

// DomainStore persists challenges.
type DomainStore interface {
	// LatestChallenge returns the newest unexpired challenge of the tenant for domain and
	// method, or (nil, nil).
	LatestChallenge(ctx context.Context, tenantID, domain, method string, now time.Time) (*Challenge, error)
	CreateChallenge(ctx context.Context, c *Challenge) error
	// PendingChallenges returns up to limit unexpired pending challenges, least recently
	// checked first.
	PendingChallenges(ctx context.Context, now time.Time, limit int) ([]*Challenge, error)
	// MarkChecked records a check that did not find the token.
	MarkChecked(ctx context.Context, id string, at time.Time) error
	// MarkVerified sets the challenge Verified, makes the domain the tenant's verified custom
	// domain and records the domain_verified event, in one transaction. It returns apperr
	// Conflict when another tenant already verified the domain.
	MarkVerified(ctx context.Context, c *Challenge, at time.Time) error
}

// VerifyDomain starts a verification of domain, or checks the pending one for the same
// domain and method and marks the domain verified when the token is found. It returns apperr
// NotFound or Forbidden as Update does, Invalid for a bad domain or method, and Conflict when
// another tenant verified the domain.
func (s *Service) VerifyDomain(ctx context.Context, a actor.Actor, tenantID, domain, method string) (*Challenge, error) {
	if err := s.authorizeManage(a, tenantID); err != nil {
		return nil, err
	}
	domain = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(domain), "."))
	if method == "" {
		method = MethodDNSTXT
	}
	var problems check.Checker
	problems.AddIf(!validHost(domain), "domain", "must be a domain name like app.example.com")
	problems.AddIf(method != MethodDNSTXT && method != MethodHTTPFile, "method", "must be DNS_TXT or HTTP_FILE")
	if err := problems.Reject("validation_failed", "the domain verification is invalid"); err != nil {
		return nil, err
	}
	if owner, err := s.store.ByVerifiedDomain(ctx, domain); err == nil && owner.ID != tenantID {
		return nil, apperr.E(apperr.Conflict, "domain_taken", "another tenant has verified this domain")
	} else if err != nil && !apperr.Is(err, apperr.NotFound) {
		return nil, err
	}
	now := s.now()
	c, err := s.store.LatestChallenge(ctx, tenantID, domain, method, now)
	if err != nil {
		return nil, err
	}
	if c == nil {
		c = &Challenge{
			ID: s.newID(), TenantID: tenantID, Domain: domain, Method: method, Token: s.newTok(),
			Status: ChallengePending, ExpiresAt: now.Add(s.ttl), CreatedAt: now,
		}
		return c, s.store.CreateChallenge(ctx, c)
	}
	if c.Status == ChallengePending {
		if err := s.check(ctx, c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// CheckPending checks up to limit pending challenges and verifies those whose token is
// published; it returns how many were verified. Lookup failures count as not found.
func (s *Service) CheckPending(ctx context.Context, limit int) (int, error) {
	pending, err := s.store.PendingChallenges(ctx, s.now(), limit)
	if err != nil {
		return 0, err
	}
	verified := 0
	for _, c := range pending {
		if err := s.check(ctx, c); err != nil && !apperr.Is(err, apperr.Conflict) {
			return verified, err
		}
		if c.Status == ChallengeVerified {
			verified++
		}
	}
	return verified, nil
}

// check looks for c's token and, when found, marks c verified (updating c).
func (s *Service) check(ctx context.Context, c *Challenge) error {
	now := s.now()
	if !s.found(ctx, c) {
		return s.store.MarkChecked(ctx, c.ID, now)
	}
	if err := s.store.MarkVerified(ctx, c, now); err != nil {
		return err
	}
	c.Status, c.VerifiedAt = ChallengeVerified, &now
	return nil
}

func (s *Service) found(ctx context.Context, c *Challenge) bool {
	if c.Method == MethodHTTPFile {
		body, err := s.checker.File(ctx, c.Domain)
		return err == nil && strings.TrimSpace(body) == c.Token
	}
	values, err := s.checker.TXT(ctx, ChallengePrefix+c.Domain)
	if err != nil {
		return false
	}
	for _, v := range values {
		if strings.TrimSpace(v) == c.Token {
			return true
		}
	}
	return false
}
