package main

import (
	"context"
	"errors"
	"flag"

	"github.com/motionstudio/platform/e2e/benchkit"
	"github.com/motionstudio/platform/pkg/authn"
)

// token serves a fresh signer's JWKS at /.well-known/jwks.json and writes a user access token
// for -subject (a member id), valid for 24 hours, to -out; it serves until ctx ends.
func token(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:18183", "address of the JWKS server")
	out := fs.String("out", "", "file the token is written to")
	subject := fs.String("subject", "", "the member id the token carries")
	issuer := fs.String("issuer", "http://127.0.0.1:8081", "token issuer (the services' JWT_ISSUER)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *subject == "" {
		return errors.New("-out and -subject are required")
	}
	return benchkit.ServeToken(ctx, *addr, *out, *issuer, "bench-agentteam", authn.Claims{Subject: *subject})
}
