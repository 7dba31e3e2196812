package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
)

// seedSQL fills a migrated agentteam database through the service's own schema: an
// organization owned by @member, one team, and @n tasks created a second apart, spread over the
// columns (40% Backlog, 30% InProgress, 10% InReview, 20% Done) and each tenth assigned to the
// member.
const seedSQL = `
INSERT INTO organizations (id, name) VALUES (@org, 'Bench organization');
INSERT INTO memberships (organization_id, member_id, role) VALUES (@org, @member, 'Owner');
INSERT INTO teams (id, organization_id, name) VALUES (@team, @org, 'Bench team');
INSERT INTO work_items (id, team_id, title, description, type, status, assignee_kind, assignee_id, created_at, updated_at)
SELECT gen_random_uuid(), @team, 'Bench task ' || g, 'Seeded task ' || g || ' of the board benchmark.', 'Task',
       CASE WHEN g % 10 < 4 THEN 'Backlog' WHEN g % 10 < 7 THEN 'InProgress' WHEN g % 10 < 8 THEN 'InReview' ELSE 'Done' END,
       CASE WHEN g % 10 = 0 THEN 'Member' END, CASE WHEN g % 10 = 0 THEN CAST(@member AS uuid) END,
       now() - (@n - g) * interval '1 second', now() - (@n - g) * interval '1 second'
FROM generate_series(1, @n) g;`

// seed creates the benchmark's organization, team and tasks and prints their ids.
func seed(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	dsn := fs.String("dsn", "", "the agentteam database (migrated)")
	n := fs.Int("tasks", 5000, "tasks on the team's board")
	member := fs.String("member", "", "the owner's member id (default: a new one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" {
		return errors.New("-dsn is required")
	}
	if *member == "" {
		*member = newUUID()
	}
	db, err := pgdb.Open(ctx, pgdb.Config{DSN: *dsn, MaxOpenConns: 2, MaxIdleConns: 1})
	if err != nil {
		return err
	}
	defer func() { _ = pgdb.Close(db) }()
	org, team := newUUID(), newUUID()
	start := time.Now()
	err = pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
		params := map[string]any{"org": org, "team": team, "member": *member, "n": *n}
		for _, stmt := range strings.Split(strings.TrimSpace(seedSQL), ";\n") {
			if err := tx.Exec(stmt, params).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if err := db.WithContext(ctx).Exec("VACUUM ANALYZE work_items").Error; err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	fmt.Printf("BOARD_ORG_ID=%s\nBOARD_TEAM_ID=%s\nBOARD_MEMBER_ID=%s\nSEED_SECONDS=%.1f\n", org, team, *member, time.Since(start).Seconds())
	return nil
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
