package cache_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/internal/cache"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
	"github.com/motionstudio/platform/services/content-svc/internal/store/storetest"
)

// seedCatalog fills the catalog with 300 templates whose words, categories, tags, aspects,
// premium flags, modes and sort columns vary and tie (so every order needs its id tie-break),
// beside unpublished and deleted ones, which listings leave out.
const seedCatalog = `
INSERT INTO categories (id, slug, name, position)
SELECT ('00000000-0000-4000-8000-0000000000' || lpad(g::text, 2, '0'))::uuid, 'cat-' || g, 'Category ' || g, g FROM generate_series(1, 4) g;
INSERT INTO tags (id, slug, name)
SELECT ('00000000-0000-4000-9000-0000000000' || lpad(g::text, 2, '0'))::uuid, 'tag-' || g, 'Tag ' || g FROM generate_series(1, 6) g;
DROP TABLE IF EXISTS seeded;
CREATE TEMP TABLE seeded AS SELECT g, gen_random_uuid() AS id FROM generate_series(1, 320) g;
INSERT INTO containers (id, slug, name, description, keywords, is_published, is_premium, primary_mode,
                        rate_avg, rate_count, use_count, published_at, created_at, updated_at, deleted_at)
SELECT s.id, 'seeded-' || s.g,
       initcap(w[s.g % 9 + 1]) || ' ' || w[(s.g / 9) % 9 + 1] || CASE WHEN s.g % 4 = 0 THEN ' 4K' ELSE '' END,
       'A ' || w[(s.g * 5) % 9 + 1] || ' clip',
       w[(s.g * 7) % 9 + 1],
       s.g % 31 <> 0, s.g % 3 = 0, (ARRAY['video', 'photo', 'slideshow'])[s.g % 3 + 1],
       (s.g % 5) / 2.0, s.g % 7, s.g % 11, now(), now() - (s.g % 13) * interval '1 hour', now(),
       CASE WHEN s.g % 37 = 0 THEN now() END
FROM seeded s, (SELECT ARRAY['wedding', 'real-estate', 'wedding-day', 'travel', 'travelogue', 'logo', 'Logo', 'promo', 'intro'] AS w) words;
INSERT INTO container_categories (container_id, category_id)
SELECT s.id, c.id FROM seeded s JOIN categories c ON c.position IN (s.g % 4 + 1, (s.g * 3) % 4 + 1) ON CONFLICT DO NOTHING;
INSERT INTO container_tags (container_id, tag_id)
SELECT s.id, t.id FROM seeded s JOIN tags t ON t.slug IN ('tag-' || (s.g % 6 + 1), 'tag-' || ((s.g * 5) % 6 + 1)) ON CONFLICT DO NOTHING;
INSERT INTO projects (id, container_id, name, aspect, original_width, original_height, project_duration_sec, choose_mode, is_published)
SELECT gen_random_uuid(), s.id, 'Project ' || k, (ARRAY['16:9', '9:16', '1:1', '4:5'])[(s.g + k) % 4 + 1], 1920, 1080, 10, 'scene', k <> 2
FROM seeded s CROSS JOIN generate_series(1, 2) k WHERE s.g % 5 <> 0;
DROP TABLE seeded;
`

// vocabulary is what seeded and changed templates are named from and searched with.
var vocabulary = []string{"wedding", "real-estate", "wedding-day", "travel", "travelogue", "logo", "Logo", "promo", "intro", "zebra", "4K", "Ölfarbe"}

// world draws the catalog's random changes and queries.
type world struct {
	r          *rand.Rand
	categories []string
	tags       []string
}

func newWorld(seed uint64) *world {
	w := &world{r: rand.New(rand.NewPCG(seed, seed+1))} // #nosec G404 -- test data
	for g := 1; g <= 4; g++ {
		w.categories = append(w.categories, fmt.Sprintf("00000000-0000-4000-8000-0000000000%02d", g))
	}
	for g := 1; g <= 6; g++ {
		w.tags = append(w.tags, fmt.Sprintf("00000000-0000-4000-9000-0000000000%02d", g))
	}
	return w
}

func (w *world) pick(from []string) string { return from[w.r.IntN(len(from))] }

// some answers up to n distinct values of from.
func (w *world) some(from []string, n int) []string {
	out := []string{}
	for _, i := range w.r.Perm(len(from))[:w.r.IntN(n+1)] {
		out = append(out, from[i])
	}
	return out
}

func (w *world) name() string {
	return w.pick(vocabulary) + " " + w.pick(vocabulary) + fmt.Sprint(" ", w.r.IntN(3))
}

// container picks a container, live or not, by SQL.
func (w *world) container() string {
	GinkgoHelper()
	var id string
	Expect(db.Raw(`SELECT id FROM containers WHERE deleted_at IS NULL ORDER BY random() LIMIT 1`).Scan(&id).Error).To(Succeed())
	return id
}

// viaProcess makes one random catalog change through p, a process's catalog, as its
// handlers do: a template created and published, updated (its words, premium flag, mode,
// categories and tags), published, unpublished or deleted.
func (w *world) viaProcess(p *process) string {
	GinkgoHelper()
	ctx, now := context.Background(), time.Now().UTC()
	switch w.r.IntN(5) {
	case 0:
		id := uuid.NewString()
		Expect(p.c.CreateContainer(ctx, catalog.Container{ID: id, Slug: "c-" + id[:8], Name: w.name(), PrimaryMode: w.pick([]string{"video", "photo"}),
			Keywords: w.pick(vocabulary), CategoryIDs: w.some(w.categories, 2), TagIDs: w.some(w.tags, 3), CreatedAt: now, UpdatedAt: now})).To(Succeed())
		Expect(p.c.SetPublished(ctx, id, true, "", "test", now)).To(Succeed())
		return "create " + id
	case 1:
		id := w.container()
		_, err := p.c.UpdateContainer(ctx, id, func(c *catalog.Container) error {
			c.Name, c.Description, c.IsPremium = w.name(), "A "+w.pick(vocabulary), w.r.IntN(2) == 0
			c.PrimaryMode, c.CategoryIDs, c.TagIDs = w.pick([]string{"video", "photo", "slideshow"}), w.some(w.categories, 2), w.some(w.tags, 3)
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		return "update " + id
	case 2:
		id := w.container()
		Expect(p.c.SetPublished(ctx, id, true, "", "test", now)).To(Succeed())
		return "publish " + id
	case 3:
		id := w.container()
		Expect(p.c.SetPublished(ctx, id, false, "test", "test", now)).To(Succeed())
		return "unpublish " + id
	}
	id := w.container()
	Expect(p.c.DeleteContainer(ctx, id, now)).To(Succeed())
	return "delete " + id
}

// bySQL makes one random catalog change as another writer does, by SQL: a rating, uses
// counted (one statement over several templates), a card's image, a tag linked or unlinked,
// a project added, moved to another aspect, unpublished or deleted.
func (w *world) bySQL() string {
	GinkgoHelper()
	id := w.container()
	var (
		sql  string
		args []any
	)
	switch w.r.IntN(7) {
	case 0:
		sql, args = `UPDATE containers SET rate_avg = ?, rate_count = rate_count + 1 WHERE id = ?`, []any{float64(w.r.IntN(11)) / 2, id}
	case 1:
		sql = `UPDATE containers SET use_count = use_count + 1 WHERE id IN (SELECT id FROM containers ORDER BY random() LIMIT 5)`
	case 2:
		sql, args = `UPDATE containers SET image = ?, slug = 'changed-' || left(id::text, 8) WHERE id = ?`, []any{"img-" + uuid.NewString(), id}
	case 3:
		sql, args = `INSERT INTO container_tags (container_id, tag_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, []any{id, w.pick(w.tags)}
	case 4:
		sql, args = `DELETE FROM container_tags WHERE container_id = ?`, []any{id}
	case 5:
		sql, args = `INSERT INTO projects (id, container_id, name, aspect, original_width, original_height, project_duration_sec, choose_mode, is_published)
			VALUES (gen_random_uuid(), ?, 'P', ?, 1920, 1080, 10, 'scene', true)`, []any{id, w.pick(catalog.Aspects())}
	default:
		sql, args = `WITH p AS (SELECT id FROM projects ORDER BY random() LIMIT 1)
			UPDATE projects SET aspect = ?, is_published = ? WHERE id IN (SELECT id FROM p)`, []any{w.pick(catalog.Aspects()), w.r.IntN(3) > 0}
	}
	Expect(db.Exec(sql, args...).Error).To(Succeed())
	return fmt.Sprintf("%s %v", sql, args)
}

// query draws a listing: up to three search words (whole or prefixes), any filters, a sort and
// a page.
func (w *world) query() catalog.TemplateQuery {
	q := catalog.TemplateQuery{Page: 1 + w.r.IntN(4), PageSize: 1 + w.r.IntN(10)}
	for range w.r.IntN(4) / 2 * (1 + w.r.IntN(2)) {
		word := w.pick([]string{"wedding", "wed", "w", "real", "estate", "travel", "trav", "logo", "promo", "intro", "4k", "4", "a", "clip",
			"zebra", "z", "ölfarbe", "öl", "day", "nomatch", "0", "1"})
		q.Words = append(q.Words, word)
	}
	if w.r.IntN(3) == 0 {
		q.CategoryID = w.pick(append(w.categories, "00000000-0000-4000-8000-00000000000A"))
	}
	if w.r.IntN(3) == 0 {
		q.TagIDs = w.some(w.tags, 2)
	}
	if w.r.IntN(4) == 0 {
		q.Mode = w.pick([]string{"video", "photo", "slideshow", "unknown"})
	}
	if w.r.IntN(4) == 0 {
		q.Aspect = w.pick(catalog.Aspects())
	}
	if w.r.IntN(4) == 0 {
		q.IsPremium = ptr(w.r.IntN(2) == 0)
	}
	q.Sort = w.pick(catalog.Sorts())
	if len(q.Words) > 0 && w.r.IntN(2) == 0 {
		q.Sort = catalog.SortRelevance
	}
	return q
}

var _ = Describe("the listing index under changes", func() {
	BeforeEach(func() {
		testkit.Truncate(db)
		Expect(db.Exec(seedCatalog).Error).To(Succeed())
	})

	It("answers every page, order, total and has_more, and the related templates, as the SQL listing does after every step of random changes by two writers, in two processes", func() {
		seed := uint64(GinkgoRandomSeed()) // #nosec G115 -- any seed
		w, writers := newWorld(seed), []*world{newWorld(seed + 2), newWorld(seed + 4)}
		a, b := newProcess(index), newProcess(index)
		a.run(true)
		b.run(true)
		compared := 0
		for step := range 6 {
			var wg sync.WaitGroup
			var changes []string
			var mu sync.Mutex
			for writer := range 2 {
				wg.Add(1)
				go func() {
					defer GinkgoRecover()
					defer wg.Done()
					for range 4 {
						var change string
						if writer == 0 {
							change = writers[writer].viaProcess(a)
						} else {
							change = writers[writer].bySQL()
						}
						mu.Lock()
						changes = append(changes, change)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			a.c.Sync(context.Background())
			b.c.Sync(context.Background())
			for range 1000 {
				q := w.query()
				want := oracle(q)
				what := fmt.Sprintf("step %d after %q: %+v", step, changes, q)
				Expect(page(a.c, q)).To(Equal(want), what)
				Expect(page(b.c, q)).To(Equal(want), what)
				compared++
			}
			var ids []string
			Expect(db.Raw(`SELECT id::text FROM containers ORDER BY random() LIMIT 60`).Scan(&ids).Error).To(Succeed())
			for _, id := range append(ids, uuid.NewString()) { // unpublished, deleted and unknown ones too
				limit := 1 + w.r.IntN(12)
				want := related(storetest.Listing{DB: db}, id, limit)
				what := fmt.Sprintf("step %d after %q: related to %s, %d", step, changes, id, limit)
				Expect(related(a.c, id, limit)).To(Equal(want), what)
				Expect(related(b.c, id, limit)).To(Equal(want), what)
			}
		}
		Expect(compared).To(BeNumerically(">=", 6000))
		Expect([]int32{a.list.reads.Load(), b.list.reads.Load()}).To(Equal([]int32{1, 1}), "every change was applied in place")
	})

	It("answers as the SQL listing does after each read of the catalog in place that random changes lost from the log make", func() {
		seed := uint64(GinkgoRandomSeed()) // #nosec G115 -- any seed
		w, writer := newWorld(seed), newWorld(seed+2)
		p := newProcess(index)
		p.run(false) // no notification and no poll: Sync alone makes it read the log
		held := cache.Held(p.c)
		for step := range 4 {
			var changes []string
			for range 8 + step*8 {
				changes = append(changes, writer.bySQL())
				if writer.r.IntN(2) == 0 {
					changes = append(changes, writer.viaProcess(newProcess(index))) // a process that keeps no index
				}
			}
			Expect(db.Exec(`DELETE FROM catalog_changes`).Error).To(Succeed()) // pruned before p read it
			p.c.Sync(context.Background())
			for range 300 {
				q := w.query()
				Expect(page(p.c, q)).To(Equal(oracle(q)), "step %d after %q: %+v", step, changes, q)
			}
			Expect(p.list.reads.Load()).To(BeEquivalentTo(step+2), "the catalog was read again at step %d", step)
		}
		Expect(cache.Held(p.c)).To(BeIdenticalTo(held), "every read applied to the index held, not to a second one")
	})
})
