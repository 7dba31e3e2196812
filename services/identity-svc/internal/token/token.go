// Package token issues the platform's JWTs: user access tokens and service tokens for
// configured OAuth clients (client-credentials grant).
package token

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
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
}

// ParseClients reads "id:secret,id2:secret2". It refuses empty ids, empty or short secrets
// and duplicates.
func ParseClients(spec string) ([]Client, error) {
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
		clients = append(clients, Client{ID: id, secretHash: sha256.Sum256([]byte(secret))})
	}
	return clients, nil
}

// Issuer mints tokens.
type Issuer struct {
	signer     Signer
	accessTTL  time.Duration
	serviceTTL time.Duration
	clients    []Client
	now        func() time.Time
}

// NewIssuer returns an Issuer.
func NewIssuer(signer Signer, accessTTL, serviceTTL time.Duration, clients []Client, now func() time.Time) *Issuer {
	return &Issuer{signer: signer, accessTTL: accessTTL, serviceTTL: serviceTTL, clients: clients, now: now}
}

// Access mints a user access token; ttl 0 means the configured default.
func (i *Issuer) Access(s auth.Subject, ttl time.Duration) (auth.Issued, error) {
	if ttl <= 0 {
		ttl = i.accessTTL
	}
	now := i.now()
	tok, err := i.signer.Sign(authn.Claims{
		Subject: s.UserID, TenantID: s.TenantID, SessionID: s.SessionID,
		Admin: s.Admin, TenantAdmin: s.TenantAdmin, TokenUse: authn.TokenUseAccess,
		IssuedAt: now, ExpiresAt: now.Add(ttl),
	})
	if err != nil {
		return auth.Issued{}, fmt.Errorf("token: sign access token: %w", err)
	}
	return auth.Issued{Token: tok, ExpiresIn: ttl}, nil
}

// Service checks a client's credentials in constant time and mints a service token. It returns
// apperr Unauthenticated (code invalid_client) for an unknown client or a wrong secret.
func (i *Issuer) Service(_ context.Context, clientID, secret string) (auth.Issued, error) {
	given := sha256.Sum256([]byte(secret))
	var match *Client
	for k := range i.clients {
		// Compare every client so timing does not reveal which ids exist.
		idOK := subtle.ConstantTimeCompare([]byte(i.clients[k].ID), []byte(clientID))
		secretOK := subtle.ConstantTimeCompare(i.clients[k].secretHash[:], given[:])
		if idOK&secretOK == 1 {
			match = &i.clients[k]
		}
	}
	if match == nil {
		return auth.Issued{}, apperr.E(apperr.Unauthenticated, "invalid_client", "unknown client or wrong secret")
	}
	now := i.now()
	tok, err := i.signer.Sign(authn.Claims{
		Subject: "service:" + match.ID, TokenUse: authn.TokenUseService,
		IssuedAt: now, ExpiresAt: now.Add(i.serviceTTL),
	})
	if err != nil {
		return auth.Issued{}, fmt.Errorf("token: sign service token: %w", err)
	}
	return auth.Issued{Token: tok, ExpiresIn: i.serviceTTL}, nil
}
