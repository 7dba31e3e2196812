// Package token issues the platform's JWTs: user access tokens and service tokens for
// configured OAuth clients (client-credentials grant), signed with the active key of a ring of
// keys that rotate (ring.go).
package token

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

// Signer signs claims into a compact JWT.
type Signer interface {
	Sign(c authn.Claims) (string, error)
}

// Client is a service client allowed the client-credentials grant.
type Client struct {
	ID         string
	secretHash [sha256.Size]byte
	// Audiences are the aud values the client may ask for; the first is its default.
	Audiences []string
}

// ParseClients reads the clients "id:secret,id2:secret2" and the audiences each may ask for,
// "id=aud1 aud2,id2=aud3"; a client not listed there may have defaultAudience only. It refuses
// empty ids, empty or short secrets, duplicates and audiences of unknown clients.
func ParseClients(spec, audiences, defaultAudience string) ([]Client, error) {
	var clients []Client
	seen := map[string]bool{}
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		id, secret, ok := strings.Cut(item, ":")
		if !ok || id == "" || len(secret) < 16 {
			return nil, fmt.Errorf("token: service client %q: want id:secret with a secret of at least 16 characters", id)
		}
		if seen[id] {
			return nil, fmt.Errorf("token: service client %q listed twice", id)
		}
		seen[id] = true
		clients = append(clients, Client{ID: id, secretHash: sha256.Sum256([]byte(secret)), Audiences: []string{defaultAudience}})
	}
	for item := range strings.SplitSeq(audiences, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		id, list, _ := strings.Cut(item, "=")
		k := slices.IndexFunc(clients, func(c Client) bool { return c.ID == strings.TrimSpace(id) })
		if k < 0 || len(strings.Fields(list)) == 0 {
			return nil, fmt.Errorf("token: audiences of service client %q: want a configured client id=aud1 aud2", id)
		}
		clients[k].Audiences = strings.Fields(list)
	}
	return clients, nil
}

// IssuerConfig says what tokens the Issuer mints.
type IssuerConfig struct {
	// AccessTTL and ServiceTTL are the lifetimes of access and service tokens.
	AccessTTL, ServiceTTL time.Duration
	// Audience is the aud of access tokens.
	Audience string
	// Clients are the service clients of the client-credentials grant.
	Clients []Client
}

// Issuer mints tokens.
type Issuer struct {
	signer Signer
	cfg    IssuerConfig
	now    func() time.Time
}

// NewIssuer returns an Issuer.
func NewIssuer(signer Signer, cfg IssuerConfig, now func() time.Time) *Issuer {
	return &Issuer{signer: signer, cfg: cfg, now: now}
}

// Access mints a user access token for the configured audience; ttl 0 means the configured
// default.
func (i *Issuer) Access(s auth.Subject, ttl time.Duration) (auth.Issued, error) {
	if ttl <= 0 {
		ttl = i.cfg.AccessTTL
	}
	now := i.now()
	tok, err := i.signer.Sign(authn.Claims{
		Subject: s.UserID, TenantID: s.TenantID, SessionID: s.SessionID,
		Admin: s.Admin, TenantAdmin: s.TenantAdmin, TokenUse: authn.TokenUseAccess,
		Audience: []string{i.cfg.Audience}, IssuedAt: now, ExpiresAt: now.Add(ttl),
	})
	if err != nil {
		return auth.Issued{}, fmt.Errorf("token: sign access token: %w", err)
	}
	return auth.Issued{Token: tok, ExpiresIn: ttl}, nil
}

// Service checks a client's credentials in constant time and mints a service token for the
// audiences asked for (RFC 8707 resource indicators), or the client's default audience when
// none is. It returns apperr Unauthenticated (code invalid_client) for an unknown client or a
// wrong secret, and apperr Invalid (code invalid_target) for an audience the client may not
// have.
func (i *Issuer) Service(_ context.Context, clientID, secret string, audiences []string) (auth.Issued, error) {
	given := sha256.Sum256([]byte(secret))
	var match *Client
	for k := range i.cfg.Clients {
		// Compare every client so timing does not reveal which ids exist.
		idOK := subtle.ConstantTimeCompare([]byte(i.cfg.Clients[k].ID), []byte(clientID))
		secretOK := subtle.ConstantTimeCompare(i.cfg.Clients[k].secretHash[:], given[:])
		if idOK&secretOK == 1 {
			match = &i.cfg.Clients[k]
		}
	}
	if match == nil {
		return auth.Issued{}, apperr.E(apperr.Unauthenticated, "invalid_client", "unknown client or wrong secret")
	}
	if len(audiences) == 0 {
		audiences = match.Audiences[:1]
	}
	for _, a := range audiences {
		if !slices.Contains(match.Audiences, a) {
			return auth.Issued{}, apperr.E(apperr.Invalid, "invalid_target", fmt.Sprintf("audience %q is not allowed for this client", a))
		}
	}
	now := i.now()
	tok, err := i.signer.Sign(authn.Claims{
		Subject: "service:" + match.ID, TokenUse: authn.TokenUseService, Audience: slices.Compact(slices.Sorted(slices.Values(audiences))),
		IssuedAt: now, ExpiresAt: now.Add(i.cfg.ServiceTTL),
	})
	if err != nil {
		return auth.Issued{}, fmt.Errorf("token: sign service token: %w", err)
	}
	return auth.Issued{Token: tok, ExpiresIn: i.cfg.ServiceTTL}, nil
}
