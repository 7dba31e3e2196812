package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"net/url"
	"os"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
)

// vocabulary is the seeded search vocabulary (seedWords) in the order of its popularity in the
// generated queries: a Zipf draw picks the first words most often.
var vocabulary = []string{
	"wedding", "birthday", "travel", "promo", "intro", "logo", "slideshow", "instagram", "story", "holiday",
	"summer", "corporate", "winter", "fashion", "food", "music", "sport", "gaming", "tech", "real",
}

// targets writes n vegeta targets (one "GET url" per line) of one catalog listing kind, drawn
// from the seeded categories, tags and words with a Zipf-like skew and pages 1-5 (or, for
// related, the related templates of 5,000 of the catalog's), so the attack spreads over many
// distinct queries as real traffic does. It fails when fewer than min of
// them are distinct.
func targets(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("targets", flag.ContinueOnError)
	dsn := fs.String("dsn", "", "the seeded bench database")
	base := fs.String("base", "", "content-svc base URL")
	kind := fs.String("kind", "", "search, tags, category, aspect, premium, sort-<newest|popular|rate|az> or related")
	n := fs.Int("n", 20000, "targets to write")
	minDistinct := fs.Int("min-distinct", 1000, "fewest distinct queries accepted")
	out := fs.String("out", "", "file the targets are written to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" || *base == "" || *kind == "" || *out == "" {
		return errors.New("-dsn, -base, -kind and -out are required")
	}
	db, err := pgdb.Open(ctx, pgdb.Config{DSN: *dsn, MaxOpenConns: 1, MaxIdleConns: 1})
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	var categories, tags []string
	if err := db.Raw(`SELECT id::text FROM categories ORDER BY position, id`).Scan(&categories).Error; err != nil {
		return fmt.Errorf("categories: %w", err)
	}
	if err := db.Raw(`SELECT id::text FROM tags ORDER BY slug, id`).Scan(&tags).Error; err != nil {
		return fmt.Errorf("tags: %w", err)
	}
	if len(categories) < 2 || len(tags) < 2 {
		return errors.New("the database is not seeded")
	}
	g := newQueryGen(categories, tags)
	next, err := g.target(*kind, db)
	if err != nil {
		return err
	}
	var b strings.Builder
	distinct := map[string]bool{}
	for range *n {
		u := *base + next()
		distinct[u] = true
		b.WriteString("GET " + u + "\n")
	}
	if len(distinct) < *minDistinct {
		return fmt.Errorf("%s: only %d distinct queries, want at least %d", *kind, len(distinct), *minDistinct)
	}
	fmt.Fprintf(os.Stderr, "%s: %d targets, %d distinct queries\n", *kind, *n, len(distinct))
	return os.WriteFile(*out, []byte(b.String()), 0o644)
}

// queryGen draws catalog queries; a fixed seed makes every run attack the same mix.
type queryGen struct {
	r                *rand.Rand
	categories, tags []string
	word, cat, tag   *rand.Zipf
}

func newQueryGen(categories, tags []string) *queryGen {
	r := rand.New(rand.NewSource(1))
	return &queryGen{
		r: r, categories: categories, tags: tags,
		word: rand.NewZipf(r, 1.1, 2, uint64(len(vocabulary)-1)),
		cat:  rand.NewZipf(r, 1.1, 2, uint64(len(categories)-1)),
		tag:  rand.NewZipf(r, 1.05, 4, uint64(len(tags)-1)),
	}
}

// page is 1 half of the time, then ever less likely up to 5.
func (g *queryGen) page() int {
	return []int{1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5}[g.r.Intn(13)]
}

func (g *queryGen) pick(options ...string) string { return options[g.r.Intn(len(options))] }

// words is one to three search words, sometimes a word's prefix.
func (g *queryGen) words() string {
	n := []int{1, 1, 1, 1, 2, 2, 3}[g.r.Intn(7)]
	w := make([]string, n)
	for i := range w {
		w[i] = vocabulary[g.word.Uint64()]
		if g.r.Intn(6) == 0 {
			w[i] = w[i][:3+g.r.Intn(len(w[i])-2)]
		}
	}
	return strings.Join(w, " ")
}

// filters adds each optional filter with the given odds (one in n; 0 never).
func (g *queryGen) filters(q url.Values, category, premium, mode, aspect int) {
	if category > 0 && g.r.Intn(category) == 0 {
		q.Set("category_id", g.categories[g.cat.Uint64()])
	}
	if premium > 0 && g.r.Intn(premium) == 0 {
		q.Set("is_premium", g.pick("true", "false"))
	}
	if mode > 0 && g.r.Intn(mode) == 0 {
		q.Set("mode", g.pick("video", "photo", "slideshow"))
	}
	if aspect > 0 && g.r.Intn(aspect) == 0 {
		q.Set("aspect", g.pick("16:9", "9:16", "1:1", "4:5"))
	}
}

// target answers the draw of one kind's request paths: a listing kind's query on a page, or
// related.
func (g *queryGen) target(kind string, db *gorm.DB) (func() string, error) {
	if kind == "related" {
		return g.related(db)
	}
	build, ok := g.kinds()[kind]
	if !ok {
		return nil, fmt.Errorf("unknown kind %q", kind)
	}
	return func() string {
		q := build()
		q.Set("page", strconv.Itoa(g.page()))
		return "/v1/templates?" + q.Encode()
	}, nil
}

// relatedTargets are the templates whose related lists the related attack asks for: 5,000 of
// the catalog's. The writer changes none of them (writes), so none is taken out while asked.
const relatedTargets = `SELECT id::text FROM containers WHERE is_published AND deleted_at IS NULL ORDER BY id LIMIT 5000`

// related draws the related templates of one of relatedTargets, with the default limit or
// another.
func (g *queryGen) related(db *gorm.DB) (func() string, error) {
	var ids []string
	if err := db.Raw(relatedTargets).Scan(&ids).Error; err != nil {
		return nil, fmt.Errorf("template ids: %w", err)
	}
	if len(ids) == 0 {
		return nil, errors.New("the database is not seeded")
	}
	return func() string {
		path := "/v1/templates/" + ids[g.r.Intn(len(ids))] + "/related"
		if g.r.Intn(4) == 0 {
			path += "?limit=" + g.pick("4", "12", "24")
		}
		return path
	}, nil
}

func (g *queryGen) sort() string { return g.pick("newest", "popular", "rate", "az") }

func (g *queryGen) kinds() map[string]func() url.Values {
	k := map[string]func() url.Values{
		"search": func() url.Values {
			q := url.Values{"q": {g.words()}}
			if s := g.pick("", "", "", "newest", "popular"); s != "" {
				q.Set("sort", s)
			}
			g.filters(q, 8, 8, 0, 8)
			return q
		},
		"tags": func() url.Values {
			a, b := g.tag.Uint64(), g.tag.Uint64()
			for b == a {
				b = uint64(g.r.Intn(len(g.tags)))
			}
			q := url.Values{"tag_ids": {g.tags[a], g.tags[b]}}
			if g.r.Intn(3) == 0 {
				q.Set("sort", g.sort())
			}
			return q
		},
		"category": func() url.Values {
			q := url.Values{"category_id": {g.categories[g.cat.Uint64()]}, "sort": {g.sort()}}
			g.filters(q, 0, 3, 0, 0)
			return q
		},
		"aspect": func() url.Values {
			q := url.Values{"aspect": {g.pick("16:9", "9:16", "1:1", "4:5")}, "sort": {g.sort()}}
			g.filters(q, 3, 3, 3, 0)
			return q
		},
		"premium": func() url.Values {
			q := url.Values{"is_premium": {g.pick("true", "false")}, "sort": {g.sort()}}
			g.filters(q, 2, 0, 3, 0)
			return q
		},
	}
	for _, s := range []string{"newest", "popular", "rate", "az"} {
		k["sort-"+s] = func() url.Values {
			q := url.Values{"sort": {s}}
			g.filters(q, 2, 3, 3, 0)
			return q
		}
	}
	return k
}
