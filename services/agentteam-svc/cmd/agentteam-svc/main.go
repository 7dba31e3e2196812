// Command agentteam-svc runs the agent-team service: `serve` (migrate, then serve HTTP and relay
// events), `migrate`, and `seed-memory [-entries N] [-member UUID]`, which seeds a team with N
// memory entries for the search benchmark and prints shell assignments of the ids it made.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/motionstudio/platform/pkg/logx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/app"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
)

const usage = "usage: agentteam-svc serve | migrate | seed-memory [-entries N] [-member UUID]"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "agentteam-svc:", err)
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
	case "seed-memory":
		return seedMemory(ctx, cfg, log, args[1:], stdout)
	default:
		return errors.New(usage)
	}
}

// seedMemory migrates, seeds and prints MEMORY_ORG_ID, MEMORY_TEAM_ID, MEMORY_MEMBER_ID and
// MEMORY_ENTRIES for a shell to eval.
func seedMemory(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("seed-memory", flag.ContinueOnError)
	entries := fs.Int("entries", 10000, "memory entries to seed")
	member := fs.String("member", "", "member id of the organization's Owner (default: a new id)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := app.Migrate(ctx, cfg, log); err != nil {
		return err
	}
	s, err := app.SeedMemory(ctx, cfg, *entries, *member)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "MEMORY_ORG_ID=%s\nMEMORY_TEAM_ID=%s\nMEMORY_MEMBER_ID=%s\nMEMORY_ENTRIES=%d\n",
		s.OrganizationID, s.TeamID, s.MemberID, s.Entries)
	return err
}
