package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/motionstudio/platform/pkg/authn"
)

// token serves a fresh signer's JWKS at /.well-known/jwks.json and writes a user access token
// for -subject (a member id), valid for 24 hours, to -out; it serves until ctx ends.
func token(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:18183", "address of the JWKS server")
	out := fs.String("out", "", "file the token is written to")
	subject := fs.String("subject", "", "the member id the token carries")
	issuer := fs.String("issuer", "motionstudio-identity", "token issuer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *subject == "" {
		return errors.New("-out and -subject are required")
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("generate key: %w", err)
	}
	signer, err := authn.NewSigner(key, "bench-agentteam", *issuer)
	if err != nil {
		return err
	}
	raw, err := signer.Sign(authn.Claims{Subject: *subject, TokenUse: authn.TokenUseAccess, ExpiresAt: time.Now().Add(24 * time.Hour)})
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
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	if err := os.WriteFile(*out, []byte(raw), 0o600); err != nil {
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
