package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
)

// seedWords name and describe the seeded templates, so that a search for one word matches
// about one template in twenty.
const seedWords = `ARRAY['wedding','birthday','travel','corporate','promo','intro','logo','slideshow','instagram',
'story','holiday','summer','winter','fashion','food','music','sport','gaming','tech','real-estate']`

// seedSQL fills an empty, migrated content database through the service's own schema: 20
// categories, 50 tags, :n published containers (every fifth premium, three modes) with two
// categories, three tags and one to three projects of rotating aspects each, then one more
// container whose project has 50 scenes of 12 text layers and 8 colors each.
const seedSQL = `
INSERT INTO categories (id, slug, name, position)
SELECT gen_random_uuid(), 'bench-category-' || g, 'Category ' || g, g FROM generate_series(1, 20) g;
INSERT INTO tags (id, slug, name) SELECT gen_random_uuid(), 'bench-tag-' || g, 'Tag ' || g FROM generate_series(1, 50) g;
CREATE TEMP TABLE bench_categories AS SELECT position AS n, id FROM categories WHERE slug LIKE 'bench-category-%';
CREATE TEMP TABLE bench_tags AS SELECT substr(slug, 11)::int AS n, id FROM tags WHERE slug LIKE 'bench-tag-%';
CREATE TEMP TABLE bench_containers AS SELECT g, gen_random_uuid() AS id FROM generate_series(1, @n) g;

INSERT INTO containers (id, slug, name, description, keywords, is_published, is_premium, primary_mode,
                        rate_avg, rate_count, use_count, published_at, created_at, updated_at)
SELECT b.id, 'bench-' || b.g,
       initcap(w[b.g % 20 + 1]) || ' ' || initcap(w[(b.g / 20) % 20 + 1]) || ' template ' || b.g,
       'A ' || w[(b.g / 400) % 20 + 1] || ' video template for ' || w[(b.g * 7) % 20 + 1] || ' clips.',
       w[(b.g * 3) % 20 + 1] || ', ' || w[(b.g * 11) % 20 + 1],
       true, b.g % 5 = 0, (ARRAY['video', 'photo', 'slideshow'])[b.g % 3 + 1],
       (b.g::bigint * 7919 % 401) / 100.0 + 1, b.g % 250, (b.g::bigint * 104729) % 100000,
       now() - b.g * interval '1 minute', now() - b.g * interval '1 minute', now() - b.g * interval '1 minute'
FROM bench_containers b, (SELECT ` + seedWords + ` AS w) words;

INSERT INTO container_categories (container_id, category_id)
SELECT b.id, c.id FROM bench_containers b JOIN bench_categories c ON c.n IN (b.g % 20 + 1, (b.g * 7 + 3) % 20 + 1)
ON CONFLICT DO NOTHING;
INSERT INTO container_tags (container_id, tag_id)
SELECT b.id, t.id FROM bench_containers b JOIN bench_tags t ON t.n IN (b.g % 50 + 1, (b.g * 3 + 7) % 50 + 1, (b.g * 11 + 13) % 50 + 1)
ON CONFLICT DO NOTHING;

INSERT INTO projects (id, container_id, name, aspect, original_width, original_height, project_duration_sec, choose_mode)
SELECT gen_random_uuid(), b.id, 'Project ' || k, a.aspect, a.w, a.h, 15 + k * 5, 'scene'
FROM bench_containers b
CROSS JOIN generate_series(1, 3) k
JOIN (VALUES (0, '16:9', 1920, 1080), (1, '9:16', 1080, 1920), (2, '1:1', 1080, 1080), (3, '4:5', 1080, 1350))
     AS a (i, aspect, w, h) ON a.i = (b.g + k) % 4
WHERE k <= b.g % 3 + 1;

INSERT INTO containers (id, slug, name, is_published, primary_mode, created_at, updated_at)
VALUES (@full_container, 'bench-full-graph', 'Full graph template', true, 'video', now() - interval '1 year', now() - interval '1 year');
INSERT INTO projects (id, container_id, name, aspect, original_width, original_height, project_duration_sec, choose_mode)
VALUES (@full_project, @full_container, 'Full graph', '16:9', 1920, 1080, 300, 'scene');
CREATE TEMP TABLE bench_scenes AS SELECT s, gen_random_uuid() AS id FROM generate_series(1, 50) s;
INSERT INTO scenes (id, project_id, key, title, position, duration_sec)
SELECT id, @full_project, 'scene_' || s, 'Scene ' || s, s, 6 FROM bench_scenes;
INSERT INTO scene_contents (id, scene_id, key, label, content_type, default_value, max_length, position)
SELECT gen_random_uuid(), b.id, 'text_' || e, 'Text ' || e, 'text', 'Your text here', 80, e
FROM bench_scenes b CROSS JOIN generate_series(1, 12) e;
INSERT INTO scene_colors (id, scene_id, key, label, default_color, position)
SELECT gen_random_uuid(), b.id, 'color_' || e, 'Color ' || e, '#' || lpad(to_hex(e * 1000003 % 16777216), 6, '0'), e
FROM bench_scenes b CROSS JOIN generate_series(1, 8) e;
`

// seed fills the database and prints, as shell assignments, what the attacks need: the full
// project's id, one category, two tags and a search word.
func seed(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	dsn := fs.String("dsn", "", "the migrated bench database")
	n := fs.Int("containers", 100000, "published containers to seed")
	seeded := fs.Bool("seeded", false, "the database is a copy of one this command seeded: insert nothing, print what the attacks need")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" {
		return errors.New("-dsn is required")
	}
	db, err := pgdb.Open(ctx, pgdb.Config{DSN: *dsn, MaxOpenConns: 1, MaxIdleConns: 1})
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	if *seeded {
		var fullProject string
		if err := db.Raw(`SELECT p.id::text FROM projects p JOIN containers c ON c.id = p.container_id
			WHERE c.slug = 'bench-full-graph'`).Row().Scan(&fullProject); err != nil {
			return fmt.Errorf("the full project of a seeded database: %w", err)
		}
		return printVars(db, 0, fullProject)
	}
	var fullContainer, fullProject string
	if err := db.Raw(`SELECT gen_random_uuid()::text, gen_random_uuid()::text`).Row().Scan(&fullContainer, &fullProject); err != nil {
		return fmt.Errorf("ids: %w", err)
	}
	start := time.Now()
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		params := map[string]any{"n": *n, "full_container": fullContainer, "full_project": fullProject}
		for _, stmt := range strings.Split(seedSQL, ";\n") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			var args []any
			if strings.Contains(stmt, "@") {
				args = []any{params}
			}
			if err := tx.Exec(stmt, args...).Error; err != nil {
				return fmt.Errorf("%w in %.80q", err, strings.TrimSpace(stmt))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	inserted := time.Since(start)
	// The listing columns kept by triggers rewrote each container a few times: VACUUM FULL
	// packs the table as a catalog grown over time would be, then VACUUM sets the visibility
	// map as autovacuum would, so that index-only scans are measured as on a settled database.
	if err := db.WithContext(ctx).Exec(`VACUUM FULL containers`).Error; err != nil {
		return fmt.Errorf("vacuum full: %w", err)
	}
	if err := db.WithContext(ctx).Exec(`VACUUM ANALYZE`).Error; err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	var counts struct{ Containers, Projects, Links, Elements int64 }
	err = db.Raw(`SELECT (SELECT count(*) FROM containers) AS containers, (SELECT count(*) FROM projects) AS projects,
		(SELECT count(*) FROM container_categories) + (SELECT count(*) FROM container_tags) AS links,
		(SELECT count(*) FROM scene_contents) + (SELECT count(*) FROM scene_colors) AS elements`).Scan(&counts).Error
	if err != nil {
		return fmt.Errorf("count: %w", err)
	}
	fmt.Fprintf(os.Stderr, "seeded %d containers, %d projects, %d category and tag links, %d scene elements in %s (+ VACUUM ANALYZE %s)\n",
		counts.Containers, counts.Projects, counts.Links, counts.Elements, inserted.Round(time.Millisecond),
		(time.Since(start) - inserted).Round(time.Millisecond))
	return printVars(db, time.Since(start), fullProject)
}

// printVars prints, as shell assignments, what the attacks need of a seeded database.
func printVars(db *gorm.DB, took time.Duration, fullProject string) error {
	var category, tagA, tagB string
	if err := db.Raw(`SELECT id::text FROM categories WHERE slug = 'bench-category-3'`).Row().Scan(&category); err != nil {
		return fmt.Errorf("category: %w", err)
	}
	if err := db.Raw(`SELECT (SELECT id::text FROM tags WHERE slug = 'bench-tag-8'), (SELECT id::text FROM tags WHERE slug = 'bench-tag-29')`).
		Row().Scan(&tagA, &tagB); err != nil {
		return fmt.Errorf("tags: %w", err)
	}
	fmt.Printf("SEED_SECONDS=%.1f\nFULL_PROJECT_ID=%s\nCATEGORY_ID=%s\nTAG_A=%s\nTAG_B=%s\nSEARCH=wedding\n",
		took.Seconds(), fullProject, category, tagA, tagB)
	return nil
}
