// Package service is the one shape of a platform service process: the runner every main calls
// (signal context, configuration, logger, the serve, migrate and service-specific
// subcommands), the Worker every background loop is, the order in which a composition root
// releases what it opened, and the clock and id source it injects into the domain.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/motionstudio/platform/pkg/logx"
)

// App is a built service: Run serves until its context is done, Close releases what it opened.
type App interface {
	Run(ctx context.Context) error
	Close()
}

// Command is a subcommand besides serve and migrate, such as identity-svc's admin.
type Command[C any] struct {
	// Name is the first argument that selects the command.
	Name string
	// Usage is the command's part of the usage line, for example "admin <command>".
	Usage string
	// Run gets the arguments after the name; its output goes to stdout, its log to the logger.
	Run func(ctx context.Context, cfg C, log *slog.Logger, args []string, stdout io.Writer) error
}

// Program describes a service binary: C is its configuration, A its composition root's App.
type Program[C any, A App] struct {
	// Name is the binary's name, used in the usage line, in error messages and in every log
	// record.
	Name string
	// Load reads the configuration from the environment.
	Load func() (C, error)
	// LogLevel picks the log level (debug, info, warn or error) out of the configuration.
	LogLevel func(C) string
	// Migrate applies the service's database migrations.
	Migrate func(ctx context.Context, cfg C, log *slog.Logger) error
	// New connects the dependencies and builds the App that serve runs.
	New func(ctx context.Context, cfg C, log *slog.Logger) (A, error)
	// Commands are the service's other subcommands.
	Commands []Command[C]
}

// Main runs the program with the process's arguments under a context that SIGINT and SIGTERM
// cancel. An error is printed to stderr after the binary's name and exits with status 1.
func Main[C any, A App](p Program[C, A]) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := p.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, p.Name+":", err)
		os.Exit(1)
	}
}

// Run runs the subcommand args name: serve migrates and then runs the App until ctx is done,
// closing it on the way out; migrate only migrates; any other name is one of Commands. The
// log goes to stderr. Without arguments or with an unknown subcommand it returns the usage
// line as the error; it also returns the configuration's, the migration's and the command's
// errors.
func (p Program[C, A]) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(p.usage())
	}
	cfg, err := p.Load()
	if err != nil {
		return err
	}
	log := logx.New(stderr, p.Name, p.LogLevel(cfg))
	switch args[0] {
	case "serve":
		if err := p.Migrate(ctx, cfg, log); err != nil {
			return err
		}
		a, err := p.New(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer a.Close()
		return a.Run(ctx)
	case "migrate":
		return p.Migrate(ctx, cfg, log)
	}
	for _, c := range p.Commands {
		if c.Name == args[0] {
			return c.Run(ctx, cfg, log, args[1:], stdout)
		}
	}
	return errors.New(p.usage())
}

// usage is "usage: <name> serve | migrate" followed by each command's usage.
func (p Program[C, A]) usage() string {
	parts := []string{"serve", "migrate"}
	for _, c := range p.Commands {
		parts = append(parts, c.Usage)
	}
	return "usage: " + p.Name + " " + strings.Join(parts, " | ")
}
