// Command benchcontent prepares and measures what scripts/bench.sh needs for content-svc:
//
//	benchcontent token  -addr A -out F             serve a JWKS on A, write a 24-hour admin token to F
//	benchcontent seed   -dsn D -containers N       seed the catalog and one 50 × 20 project
//	benchcontent targets -dsn D -base U -kind K ... write an attack of many distinct catalog queries
//	benchcontent writes -dsn D -base U -token T    commit catalog changes during an attack, print their freshness
//	benchcontent upload -base U -token-file F ...  complete a multipart AEP upload, timed
//	benchcontent purge  -bucket B                  empty and remove the bench bucket
//
// It talks only to 127.0.0.1 and to the databases and buckets bench.sh names for it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = "usage: benchcontent token|seed|targets|writes|upload|purge [flags]"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	commands := map[string]func(context.Context, []string) error{
		"token": token, "seed": seed, "upload": upload, "purge": purge, "targets": targets,
		"writes": writes,
	}
	run, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err := run(ctx, os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "benchcontent %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
