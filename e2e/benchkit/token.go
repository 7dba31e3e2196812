// Package benchkit holds what the benchmark commands share: a stand-in for identity-svc that
// signs one long-lived token and serves the key set the services under attack verify it with.
package benchkit

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/motionstudio/platform/pkg/authn"
)

// TokenLifetime is how long the benchmark token is valid.
const TokenLifetime = 24 * time.Hour

// ServeToken signs claims (their expiry set to TokenLifetime) with a fresh key named kid for
// issuer, writes the token to out, and serves the key set at http://addr/.well-known/jwks.json
// until ctx ends.
func ServeToken(ctx context.Context, addr, out, issuer, kid string, claims authn.Claims) error {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("generate key: %w", err)
	}
	signer, err := authn.NewSigner(key, kid, issuer)
	if err != nil {
		return err
	}
	claims.TokenUse = authn.TokenUseAccess
	claims.Audience = []string{authn.DefaultAudience}
	claims.ExpiresAt = time.Now().Add(TokenLifetime)
	raw, err := signer.Sign(claims)
	if err != nil {
		return err
	}
	jwks, err := json.Marshal(signer.PublicSet())
	if err != nil {
		return fmt.Errorf("encode jwks: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/jwks.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	if err := os.WriteFile(out, []byte(raw), 0o600); err != nil {
		return fmt.Errorf("write token: %w", err)
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve jwks: %w", err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}
