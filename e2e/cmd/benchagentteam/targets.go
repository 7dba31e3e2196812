package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/motionstudio/platform/pkg/pgdb"
)

// targets writes a vegeta attack in the HTTP format: -kind board reads the seeded team's board
// (first page of every column); -kind moves cycles the team's tasks through the columns, one
// PATCH per task and status, so every move really changes a status.
func targets(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("targets", flag.ContinueOnError)
	base := fs.String("base", "http://127.0.0.1:8083", "the service's base URL")
	tokenFile := fs.String("token-file", "", "file holding the bearer token")
	team := fs.String("team", "", "the seeded team id")
	kind := fs.String("kind", "board", "board or moves")
	dsn := fs.String("dsn", "", "the agentteam database (for -kind moves)")
	out := fs.String("out", "", "file the targets are written to")
	limit := fs.Int("limit", 2000, "tasks cycled by -kind moves")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tokenFile == "" || *team == "" || *out == "" {
		return errors.New("-token-file, -team and -out are required")
	}
	raw, err := os.ReadFile(*tokenFile)
	if err != nil {
		return fmt.Errorf("read token: %w", err)
	}
	auth := "Authorization: Bearer " + strings.TrimSpace(string(raw))
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	switch *kind {
	case "board":
		fmt.Fprintf(w, "GET %s/api/orgboard/board?teamId=%s\n%s\n\n", *base, *team, auth)
	case "moves":
		err = writeMoves(ctx, w, *dsn, *base, *team, auth, *limit)
	default:
		err = fmt.Errorf("unknown -kind %q", *kind)
	}
	if err == nil {
		err = w.Flush()
	}
	return errors.Join(err, f.Close())
}

// writeMoves writes, for each of up to limit tasks, a move to each column in turn, so that
// consecutive moves of one task always change its status.
func writeMoves(ctx context.Context, w *bufio.Writer, dsn, base, team, auth string, limit int) error {
	if dsn == "" {
		return errors.New("-dsn is required for -kind moves")
	}
	db, err := pgdb.Open(ctx, pgdb.Config{DSN: dsn, MaxOpenConns: 1, MaxIdleConns: 1})
	if err != nil {
		return err
	}
	defer func() { _ = pgdb.Close(db) }()
	var ids []string
	if err := db.WithContext(ctx).Raw(`SELECT id::text FROM work_items WHERE team_id = ? AND status = 'Backlog' ORDER BY created_at LIMIT ?`, team, limit).
		Scan(&ids).Error; err != nil {
		return fmt.Errorf("read tasks: %w", err)
	}
	for _, status := range []string{"InProgress", "InReview", "Backlog"} {
		for _, id := range ids {
			fmt.Fprintf(w, "PATCH %s/api/orgboard/tasks/%s/move\n%s\nContent-Type: application/json\n@%s\n\n", base, id, auth, bodyFile(status))
		}
	}
	for _, status := range []string{"InProgress", "InReview", "Backlog"} {
		if err := os.WriteFile(bodyFile(status), []byte(`{"status":"`+status+`"}`), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func bodyFile(status string) string { return os.TempDir() + "/benchagentteam-move-" + status + ".json" }
