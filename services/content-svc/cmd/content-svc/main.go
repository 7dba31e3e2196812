// Command content-svc runs the content service: `serve` (migrate, then serve HTTP and relay
// events) and `migrate`.
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
	"github.com/motionstudio/platform/services/content-svc/internal/app"
	"github.com/motionstudio/platform/services/content-svc/internal/config"
)

const usage = "usage: content-svc serve | migrate"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "content-svc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
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
	default:
		return errors.New(usage)
	}
}
