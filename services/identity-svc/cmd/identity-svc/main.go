// Command identity-svc runs the identity service: `serve` (migrate, then serve HTTP and relay
// events), `migrate`, and `admin` (operator CLI).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/motionstudio/platform/pkg/logx"
	"github.com/motionstudio/platform/services/identity-svc/internal/app"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
)

const usage = "usage: identity-svc serve | migrate | admin <command>"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "identity-svc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	log := logx.New(stderr, app.Name, cfg.LogLevel)
	switch args[0] {
	case "serve":
		if err := app.Migrate(ctx, cfg, log); err != nil {
			return err
		}
		a, err := app.New(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer a.Close()
		return a.Run(ctx)
	case "migrate":
		return app.Migrate(ctx, cfg, log)
	case "admin":
		return app.Admin(ctx, cfg, log, args[1:], stdout)
	default:
		return errors.New(usage)
	}
}
