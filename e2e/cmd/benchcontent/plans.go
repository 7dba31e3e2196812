package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
)

// The card columns as content-svc's store reads them. They are copied here because the store is
// internal to the service.
const planColumns = `c.id, c.slug, c.name, c.image, c.demo, c.mini_demo, c.is_premium, c.is_mockup, c.primary_mode,
	c.rate_avg, c.rate_count, c.use_count, array_to_string(c.aspects, ',') AS aspects`

var (
	indexUse = regexp.MustCompile(`(?:Index Only Scan|Index Scan|Bitmap Index Scan)(?: Backward)? (?:using|on) (\w+)`)
	seqScan  = regexp.MustCompile(`Seq Scan on (\w+)`)
	execTime = regexp.MustCompile(`Execution Time: ([0-9.]+) ms`)
)

// plans runs EXPLAIN (ANALYZE, BUFFERS) for the one query a catalog listing may make (its
// listing index answers everything else), writes the plan to -out and prints a summary line.
func plans(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("plans", flag.ContinueOnError)
	dsn := fs.String("dsn", "", "the seeded bench database")
	out := fs.String("out", "", "file the plans are written to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" || *out == "" {
		return errors.New("-dsn and -out are required")
	}
	db, err := pgdb.Open(ctx, pgdb.Config{DSN: *dsn, MaxOpenConns: 1, MaxIdleConns: 1})
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	f, err := os.Create(*out)
	if err != nil {
		return fmt.Errorf("create %s: %w", *out, err)
	}
	defer f.Close()
	// The one query of a listing answered by content-svc's index: the cards it does not keep
	// (store.Catalog.TemplateCards), here a page of the least used templates.
	var ids []string
	if err := db.WithContext(ctx).Raw(`SELECT c.id::text FROM containers c WHERE c.is_published AND c.deleted_at IS NULL
		ORDER BY c.use_count, c.id LIMIT 20`).Scan(&ids).Error; err != nil {
		return fmt.Errorf("card ids: %w", err)
	}
	byID := `SELECT ` + planColumns + ` FROM containers c WHERE c.id = ANY(?::uuid[]) ORDER BY array_position(?::uuid[], c.id)`
	list := "{" + strings.Join(ids, ",") + "}"
	plan, err := explain(db.WithContext(ctx), byID, []any{list, list})
	if err != nil {
		return fmt.Errorf("cards by id: %w", err)
	}
	fmt.Fprintf(f, "== index page (cards by id)\n%s\n\n%s\n\n", byID, plan)
	fmt.Println(summarize("index page cards by id", plan))
	return f.Close()
}

func explain(db *gorm.DB, sql string, args []any) (string, error) {
	rows, err := db.Raw(`EXPLAIN (ANALYZE, BUFFERS) `+sql, args...).Rows()
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n"), rows.Err()
}

// summarize names the plan's indexes and sequential scans and its execution time.
func summarize(name, plan string) string {
	var used []string
	for _, m := range indexUse.FindAllStringSubmatch(plan, -1) {
		if !slices.Contains(used, m[1]) {
			used = append(used, m[1])
		}
	}
	for _, m := range seqScan.FindAllStringSubmatch(plan, -1) {
		if s := "SEQ SCAN " + m[1]; !slices.Contains(used, s) {
			used = append(used, s)
		}
	}
	ms := "?"
	if m := execTime.FindStringSubmatch(plan); m != nil {
		ms = m[1]
	}
	return fmt.Sprintf("%-24s %9s ms   %s", name, ms, strings.Join(used, ", "))
}
