package main

import (
	"context"
	"errors"
	"flag"

	"github.com/motionstudio/platform/e2e/benchkit"
	"github.com/motionstudio/platform/pkg/authn"
)

// token serves a fresh signer's JWKS at /.well-known/jwks.json and writes a platform-admin
// access token signed by it, valid for 24 hours, to -out; it serves until ctx ends.
func token(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:18181", "address of the JWKS server")
	out := fs.String("out", "", "file the admin token is written to")
	issuer := fs.String("issuer", "http://127.0.0.1:8081", "token issuer (the services' JWT_ISSUER)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("-out is required")
	}
	return benchkit.ServeToken(ctx, *addr, *out, *issuer, "bench", authn.Claims{Subject: "bench-admin", Admin: true})
}
