package cache_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/internal/cache"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
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

// lister counts the catalog's reads into an index and of cards by id; during, when set, runs
// inside the first read.
type lister struct {
	*store.Catalog
	reads, cardReads atomic.Int32
	during           func()
}

func (l *lister) Listing(ctx context.Context, cards int, v catalog.ListingVisitor) error {
	if l.reads.Add(1) == 1 && l.during != nil {
		v = &interrupted{ListingVisitor: v, during: l.during}
	}
	return l.Catalog.Listing(ctx, cards, v)
}

func (l *lister) TemplateCards(ctx context.Context, ids []string) ([]catalog.TemplateCard, error) {
	l.cardReads.Add(1)
	return l.Catalog.TemplateCards(ctx, ids)
}

// interrupted runs during once, as its first row arrives.
type interrupted struct {
	catalog.ListingVisitor
	once   sync.Once
	during func()
}

func (i *interrupted) Row(r catalog.ListingRow) error {
	i.once.Do(i.during)
	return i.ListingVisitor.Row(r)
}

// runIndexer keeps c's index, reading l, until the spec ends.
func runIndexer(c *cache.Catalog, l *lister, opts cache.IndexOptions) {
	GinkgoHelper()
	x, err := cache.NewIndexer(c, l, opts, slog.New(slog.NewTextHandler(GinkgoWriter, nil)), prometheus.NewRegistry())
	Expect(err).NotTo(HaveOccurred())
	testkit.RunUntilCleanup(x.Run)
}

// every is an index of the seeded catalog keeping every card.
var every = cache.IndexOptions{MaxTemplates: 1000, Cards: 1000}

// probes numbers the pages probe reads, so that no probe finds a page kept by an earlier one.
var probes atomic.Int32

// probe is a page of the newest templates no probe read before.
func probe() catalog.TemplateQuery {
	return catalog.TemplateQuery{Sort: catalog.SortNewest, Page: int(probes.Add(1)), PageSize: 1}
}

// fromIndex reports whether q's page and total were answered without the database.
func fromIndex(c *cache.Catalog, src *source, q catalog.TemplateQuery) bool {
	pages, counts := src.pages.Load(), src.counts.Load()
	_, err := c.Templates(context.Background(), q)
	Expect(err).NotTo(HaveOccurred())
	_, err = c.CountTemplates(context.Background(), q)
	Expect(err).NotTo(HaveOccurred())
	return src.pages.Load() == pages && src.counts.Load() == counts
}

var _ = Describe("the listing index", func() {
	var (
		c    *cache.Catalog
		src  *source
		list *lister
	)
	BeforeEach(func() {
		testkit.Truncate(db)
		Expect(db.Exec(seedCatalog).Error).To(Succeed())
		c, src = newCatalog(cache.DefaultMaxBytes)
		list = &lister{Catalog: store.NewCatalog(db)}
	})

	DescribeTable("answers every page and total as the database does", func(opts cache.IndexOptions, readsCards bool) {
		listen(c, src)
		runIndexer(c, list, opts)
		Eventually(func() bool { return fromIndex(c, src, probe()) }).WithTimeout(5 * time.Second).Should(BeTrue())

		src.pages.Store(0)
		src.counts.Store(0)
		sql := store.NewCatalog(db)
		yes, no := true, false
		wordSets := [][]string{nil, {"wedding"}, {"wed"}, {"real"}, {"estate"}, {"real", "estate"}, {"travel"},
			{"logo", "promo"}, {"4k"}, {"4"}, {"intro", "wedding", "clip"}, {"nomatch"}, {"a"}, {"wedding", "wedding"}}
		filters := []catalog.TemplateQuery{{},
			{CategoryID: "00000000-0000-4000-8000-000000000002"},
			{CategoryID: "00000000-0000-4000-8000-00000000000A"},
			{TagIDs: []string{"00000000-0000-4000-9000-000000000003"}},
			{TagIDs: []string{"00000000-0000-4000-9000-000000000001", "00000000-0000-4000-9000-000000000004"}},
			{Aspect: "9:16"}, {Aspect: "4:5", IsPremium: &yes}, {IsPremium: &no, Mode: "photo"}, {Mode: "unknown"},
			{CategoryID: "00000000-0000-4000-8000-000000000001", TagIDs: []string{"00000000-0000-4000-9000-000000000002"}, Aspect: "16:9"},
		}
		compared := 0
		for _, words := range wordSets {
			sorts := catalog.Sorts()
			if len(words) > 0 {
				sorts = append(sorts, catalog.SortRelevance)
			}
			for _, f := range filters {
				for _, sort := range sorts {
					for _, pg := range []int{1, 2, 4} {
						q := f
						q.Words, q.Sort, q.Page, q.PageSize = words, sort, pg, 7
						what := fmt.Sprintf("%+v", q)
						want, err := sql.Templates(context.Background(), q)
						Expect(err).NotTo(HaveOccurred())
						got, err := c.Templates(context.Background(), q)
						Expect(err).NotTo(HaveOccurred())
						Expect(got).To(Equal(want), what)
						wantN, err := sql.CountTemplates(context.Background(), q)
						Expect(err).NotTo(HaveOccurred())
						Expect(c.CountTemplates(context.Background(), q)).To(Equal(wantN), what)
						compared++
					}
				}
			}
		}
		Expect(compared).To(BeNumerically(">", 1000))
		Expect([]int32{src.pages.Load(), src.counts.Load()}).To(Equal([]int32{0, 0}), "every answer came from the index")
		if readsCards {
			Expect(list.cardReads.Load()).To(BeNumerically(">", 0), "pages read the cards the index does not keep by id")
		} else {
			Expect(list.cardReads.Load()).To(BeZero(), "every card was kept")
		}
		Expect(fromIndex(c, src, catalog.TemplateQuery{Words: []string{"café"}, Sort: catalog.SortRelevance, Page: 1, PageSize: 5})).
			To(BeFalse(), "a word the database may tokenise otherwise is left to it")
	},
		Entry("keeping every card, without reading the database", every, false),
		Entry("keeping the 40 most used cards, reading the others by id", cache.IndexOptions{MaxTemplates: 1000, Cards: 40}, true),
	)

	It("orders a search by where its words matched, the name first, then by popularity", func() {
		listen(c, src)
		runIndexer(c, list, every)
		Eventually(func() bool { return fromIndex(c, src, probe()) }).WithTimeout(5 * time.Second).Should(BeTrue())
		cards, err := c.Templates(context.Background(), catalog.TemplateQuery{Words: []string{"intro"}, Sort: catalog.SortRelevance, Page: 1, PageSize: 100})
		Expect(err).NotTo(HaveOccurred())
		Expect(len(cards)).To(BeNumerically(">", 20))
		place := func(card catalog.TemplateCard) int {
			var row struct{ InName, InKeywords bool }
			Expect(db.Raw(`SELECT name ILIKE '%intro%' AS in_name, keywords ILIKE '%intro%' AS in_keywords FROM containers WHERE id = ?`,
				card.ContainerID).Scan(&row).Error).To(Succeed())
			switch {
			case row.InName:
				return catalog.WeightName
			case row.InKeywords:
				return catalog.WeightKeywords
			}
			return catalog.WeightDescription
		}
		for i := 1; i < len(cards); i++ {
			a, b := place(cards[i-1]), place(cards[i])
			Expect(a).To(BeNumerically(">=", b), "card %d", i)
			if a == b {
				Expect(cards[i-1].UseCount).To(BeNumerically(">=", cards[i].UseCount), "card %d", i)
			}
		}
	})

	It("is not used from a change on, and answers again once read after it", func() {
		listen(c, src)
		runIndexer(c, list, every)
		Eventually(func() bool { return fromIndex(c, src, probe()) }).WithTimeout(5 * time.Second).Should(BeTrue())
		newest := catalog.TemplateQuery{Sort: catalog.SortNewest, Page: 1, PageSize: 5}
		first, err := c.Templates(context.Background(), newest)
		Expect(err).NotTo(HaveOccurred())

		Expect(c.DeleteContainer(context.Background(), first[0].ContainerID, time.Now().UTC())).To(Succeed())
		after, err := c.Templates(context.Background(), newest)
		Expect(err).NotTo(HaveOccurred())
		Expect(after[0].ContainerID).To(Equal(first[1].ContainerID), "the writer reads its own write at once")

		Expect(db.Exec(`UPDATE containers SET name = 'Zebra intro' WHERE id = ?`, first[1].ContainerID).Error).To(Succeed())
		Eventually(func() []catalog.TemplateCard {
			cards, err := c.Templates(context.Background(), newest)
			Expect(err).NotTo(HaveOccurred())
			return cards
		}).WithTimeout(notified).Should(ContainElement(HaveField("Name", "Zebra intro")), "another process's write is seen once notified")
		Eventually(func() bool { return fromIndex(c, src, probe()) }).WithTimeout(5 * time.Second).Should(BeTrue())
		n, err := c.CountTemplates(context.Background(), catalog.TemplateQuery{Words: []string{"zebra"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(1))
	})

	It("installs no index read while a change arrived, and reads it again", func() {
		list.during = c.Forget
		listen(c, src)
		runIndexer(c, list, every)
		Eventually(func() bool { return fromIndex(c, src, probe()) }).WithTimeout(5 * time.Second).Should(BeTrue())
		Expect(list.reads.Load()).To(BeNumerically(">=", 2))
	})

	It("keeps listing from the database when a read of the index panics, and reads it again on the next change", func() {
		list.during = func() { panic("a bug in the index") }
		listen(c, src)
		runIndexer(c, list, every)
		Eventually(list.reads.Load).WithTimeout(5 * time.Second).Should(BeEquivalentTo(1))
		Consistently(func() bool { return fromIndex(c, src, probe()) }).WithTimeout(300 * time.Millisecond).Should(BeFalse())

		c.Forget()
		Eventually(func() bool { return fromIndex(c, src, probe()) }).WithTimeout(5 * time.Second).Should(BeTrue())
		Expect(list.reads.Load()).To(BeEquivalentTo(2))
	})

	It("keeps no index of a catalog larger than its bound", func() {
		listen(c, src)
		runIndexer(c, list, cache.IndexOptions{MaxTemplates: 100, Cards: 100})
		Consistently(func() bool { return fromIndex(c, src, probe()) }).WithTimeout(500 * time.Millisecond).Should(BeFalse())
		Expect(list.reads.Load()).To(BeZero(), "the catalog's kept total tells it is too large before reading it")
	})
})
