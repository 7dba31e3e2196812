// Command benchagentteam prepares what a benchmark of agentteam-svc's board needs:
//
//	benchagentteam seed    -dsn D -tasks N            one organization, team and member with N tasks
//	benchagentteam token   -addr A -out F -subject S  serve a JWKS on A, write S's 24-hour user token to F
//	benchagentteam targets -base U -token-file F ...  write vegeta targets for the board or for moves
//	benchagentteam runs    -base U -token-file F -org O -team T -n N   runs through the queue, model stub answering at once
//	benchagentteam memory  -base U -token-file F -team T -n N -out F   seed N memory entries, write search targets
//
// seed prints shell assignments (BOARD_ORG_ID, BOARD_TEAM_ID, BOARD_MEMBER_ID, SEED_SECONDS) for
// eval. It talks only to 127.0.0.1 and to the database it is given.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = "usage: benchagentteam seed|token|targets|runs|tools|memory [flags]"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	commands := map[string]func(context.Context, []string) error{"seed": seed, "token": token, "targets": targets, "runs": runs, "tools": tools, "memory": memory}
	run, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err := run(ctx, os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "benchagentteam %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
