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

// The catalog queries as content-svc's store.Catalog.Templates builds them: a count and one
// page of 20 cards. They are copied here because the store is internal to the service.
const (
	planLive    = `c.is_published AND c.deleted_at IS NULL`
	planColumns = `c.id, c.slug, c.name, c.image, c.demo, c.mini_demo, c.is_premium, c.is_mockup, c.primary_mode,
	c.rate_avg, c.rate_count, c.use_count, array_to_string(c.aspects, ',') AS aspects`
)

// relevance is content-svc's order of a one-word search (store.relevance): the best place the
// word matched in, then popularity.
func relevance(ts string) string {
	return `CASE WHEN ts_filter(c.search, '{a}') @@ to_tsquery('simple', '` + ts + `') THEN 3
		WHEN ts_filter(c.search, '{b}') @@ to_tsquery('simple', '` + ts + `') THEN 2
		WHEN ts_filter(c.search, '{c}') @@ to_tsquery('simple', '` + ts + `') THEN 1 ELSE 0 END DESC, c.use_count DESC, c.id DESC`
}

// planCase is one catalog listing: extra conditions with their arguments and an order, and
// for a filter set whose total catalog_counts keeps (no words, at most one tag alone) the
// condition reading that row instead of counting.
type planCase struct {
	name  string
	where []string
	args  []any
	order string
	kept  string
}

// keptAll is the catalog_counts row of the whole catalog; keptWith picks one column's value.
const keptAll = `tag_id IS NULL AND category_id IS NULL AND is_premium IS NULL AND mode IS NULL AND aspect IS NULL`

func keptWith(column string) string {
	return strings.Replace(keptAll, column+` IS NULL`, column+` = ?`, 1)
}

var (
	indexUse = regexp.MustCompile(`(?:Index Only Scan|Index Scan|Bitmap Index Scan)(?: Backward)? (?:using|on) (\w+)`)
	seqScan  = regexp.MustCompile(`Seq Scan on (\w+)`)
	execTime = regexp.MustCompile(`Execution Time: ([0-9.]+) ms`)
)

// plans runs EXPLAIN (ANALYZE, BUFFERS) for the count and the page query of each catalog
// listing, writes the plans to -out and prints one summary line per plan.
func plans(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("plans", flag.ContinueOnError)
	dsn := fs.String("dsn", "", "the seeded bench database")
	out := fs.String("out", "", "file the plans are written to")
	search := fs.String("search", "wedding", "search word")
	category := fs.String("category", "", "category id")
	tagA := fs.String("tag-a", "", "first tag id")
	tagB := fs.String("tag-b", "", "second tag id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" || *out == "" || *category == "" || *tagA == "" || *tagB == "" {
		return errors.New("-dsn, -out, -category, -tag-a and -tag-b are required")
	}
	db, err := pgdb.Open(ctx, pgdb.Config{DSN: *dsn, MaxOpenConns: 1, MaxIdleConns: 1})
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	ts := *search + ":*"
	newest := `c.created_at DESC, c.id DESC`
	cases := []planCase{
		{"search", []string{`c.search @@ to_tsquery('simple', ?)`}, []any{ts}, relevance(ts), ""},
		{"filter-category", []string{`c.category_ids @> ARRAY[?::uuid]`}, []any{*category}, newest, keptWith("category_id")},
		{"filter-tag", []string{`c.tag_ids @> ARRAY[?::uuid]`}, []any{*tagA}, newest, keptWith("tag_id")},
		{"filter-tags", []string{`c.tag_ids @> ?::uuid[]`}, []any{"{" + *tagA + "," + *tagB + "}"}, newest, ""},
		{"filter-aspect", []string{`c.aspects @> ARRAY[?::text]`}, []any{"9:16"}, newest, keptWith("aspect")},
		{"filter-premium", []string{`c.is_premium = ?`}, []any{true}, newest, keptWith("is_premium")},
		{"sort-newest", nil, nil, newest, keptAll},
		{"sort-popular", nil, nil, `c.use_count DESC, c.id DESC`, keptAll},
		{"sort-rate", nil, nil, `c.rate_avg DESC, c.id DESC`, keptAll},
		{"sort-az", nil, nil, `c.name ASC, c.id ASC`, keptAll},
	}
	f, err := os.Create(*out)
	if err != nil {
		return fmt.Errorf("create %s: %w", *out, err)
	}
	defer f.Close()
	for _, pc := range cases {
		cond := strings.Join(append([]string{planLive}, pc.where...), " AND ")
		count := `SELECT count(*) FROM containers c WHERE ` + cond
		if pc.kept != "" {
			count = `SELECT total FROM catalog_counts WHERE ` + pc.kept
		}
		queries := []struct{ kind, sql string }{
			{"count", count},
			{"page", `SELECT ` + planColumns + ` FROM containers c WHERE ` + cond + ` ORDER BY ` + pc.order + ` LIMIT 20 OFFSET 0`},
		}
		for _, q := range queries {
			plan, err := explain(db.WithContext(ctx), q.sql, pc.args)
			if err != nil {
				return fmt.Errorf("%s %s: %w", pc.name, q.kind, err)
			}
			fmt.Fprintf(f, "== %s (%s)\n%s\n\n%s\n\n", pc.name, q.kind, q.sql, plan)
			fmt.Println(summarize(pc.name+" "+q.kind, plan))
		}
	}
	// The one query of a listing answered by content-svc's index: the cards it does not keep
	// (store.Catalog.TemplateCards), here a page of the least used templates.
	var ids []string
	if err := db.WithContext(ctx).Raw(`SELECT c.id::text FROM containers c WHERE ` + planLive +
		` ORDER BY c.use_count, c.id LIMIT 20`).Scan(&ids).Error; err != nil {
		return fmt.Errorf("card ids: %w", err)
	}
	byID := `SELECT ` + planColumns + ` FROM containers c WHERE c.id = ANY(?::uuid[]) AND ` + planLive +
		` ORDER BY array_position(?::uuid[], c.id)`
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
