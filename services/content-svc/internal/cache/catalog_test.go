package cache_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/internal/cache"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
)

// notified bounds how long a committed change takes to reach the listener.
const notified = 2 * time.Second

// source counts the catalog reads; during, when set, runs inside each read after the database
// answered, as a change arriving mid-read would.
type source struct {
	*store.Catalog
	pages, counts atomic.Int32
	during        func()
}

func (s *source) Templates(ctx context.Context, q catalog.TemplateQuery) ([]catalog.TemplateCard, error) {
	s.pages.Add(1)
	cards, err := s.Catalog.Templates(ctx, q)
	if s.during != nil {
		s.during()
	}
	return cards, err
}

func (s *source) CountTemplates(ctx context.Context, q catalog.TemplateQuery) (int, error) {
	s.counts.Add(1)
	return s.Catalog.CountTemplates(ctx, q)
}

// publish writes n published templates of the mode through the store and answers their ids.
func publish(mode string, n int) []string {
	GinkgoHelper()
	ctx, s := context.Background(), store.NewCatalog(db)
	ids := make([]string, n)
	for i := range ids {
		now := time.Now().UTC()
		ids[i] = uuid.NewString()
		c := catalog.Container{ID: ids[i], Slug: "t-" + ids[i][:8], Name: fmt.Sprintf("T%d", i), PrimaryMode: mode,
			CategoryIDs: []string{}, TagIDs: []string{}, CreatedAt: now, UpdatedAt: now}
		Expect(s.CreateContainer(ctx, c)).To(Succeed())
		Expect(s.SetPublished(ctx, c.ID, true, "", "test", now)).To(Succeed())
	}
	return ids
}

// listen runs a listener over c (reading src) until the spec ends and waits until it listens.
func listen(c *cache.Catalog, src *source) {
	GinkgoHelper()
	l, err := cache.NewListener(c, dsn, slog.New(slog.NewTextHandler(GinkgoWriter, nil)), prometheus.NewRegistry())
	Expect(err).NotTo(HaveOccurred())
	testkit.RunUntilCleanup(l.Run)
	// A page read twice with at most one database read tells it listens (none when an earlier
	// round already kept it, as when it started listening between a round's two reads); the
	// probe's reads are not counted.
	Eventually(func() int32 {
		before := src.pages.Load()
		page(c, catalog.TemplateQuery{Mode: "probe"})
		page(c, catalog.TemplateQuery{Mode: "probe"})
		return src.pages.Load() - before
	}).WithTimeout(5 * time.Second).Should(BeNumerically("<=", 1))
	src.pages.Store(0)
}

func newCatalog(maxBytes int) (*cache.Catalog, *source) {
	src := &source{Catalog: store.NewCatalog(db)}
	return cache.NewCatalog(src, maxBytes), src
}

// page reads one page of q (sorted by newest, 2 cards a page unless q says otherwise) as the
// store answers it: with the first card of the next page, when there is one.
func page(c *cache.Catalog, q catalog.TemplateQuery) []string {
	GinkgoHelper()
	if q.Sort == "" {
		q.Sort = catalog.SortNewest
	}
	if q.Page == 0 {
		q.Page, q.PageSize = 1, 2
	}
	cards, err := c.Templates(context.Background(), q)
	Expect(err).NotTo(HaveOccurred())
	ids := make([]string, len(cards))
	for i, card := range cards {
		ids[i] = card.ContainerID
	}
	return ids
}

func total(c *cache.Catalog, mode string) int {
	GinkgoHelper()
	n, err := c.CountTemplates(context.Background(), catalog.TemplateQuery{Mode: mode})
	Expect(err).NotTo(HaveOccurred())
	return n
}

var _ = Describe("catalog listings kept in memory", func() {
	var (
		c   *cache.Catalog
		src *source
		ids []string
		q   = catalog.TemplateQuery{Mode: "kept"}
	)
	BeforeEach(func() {
		testkit.Truncate(db)
		c, src = newCatalog(cache.DefaultMaxBytes)
		ids = publish("kept", 3)
	})

	It("reads the database for every listing until the listener listens", func() {
		page(c, q)
		page(c, q)
		total(c, "kept")
		total(c, "kept")
		Expect([]int32{src.pages.Load(), src.counts.Load()}).To(Equal([]int32{2, 2}))
	})

	It("answers pages and totals from memory while listening, until a change is notified", func() {
		listen(c, src)
		first := page(c, q)
		Expect(total(c, "kept")).To(Equal(3))
		pages, counts := src.pages.Load(), src.counts.Load()
		Expect(page(c, q)).To(Equal(first))
		Expect(total(c, "kept")).To(Equal(3))
		Expect([]int32{src.pages.Load(), src.counts.Load()}).To(Equal([]int32{pages, counts}))

		Expect(db.Exec(`UPDATE containers SET is_published = false WHERE id = ?`, first[0]).Error).To(Succeed())
		Eventually(func() int { return total(c, "kept") }).WithTimeout(notified).Should(Equal(2))
		Expect(page(c, q)).NotTo(ContainElement(first[0]))
	})

	It("drops everything on a change of what a card shows, not only of what is filtered", func() {
		listen(c, src)
		page(c, q)
		Expect(db.Exec(`UPDATE containers SET use_count = 5 WHERE id = ?`, ids[0]).Error).To(Succeed())
		Eventually(func() string { return page(c, catalog.TemplateQuery{Mode: "kept", Sort: catalog.SortPopular})[0] }).
			WithTimeout(notified).Should(Equal(ids[0]))
		before := src.pages.Load()
		Expect(db.Exec(`UPDATE containers SET image = 'new.png' WHERE id = ?`, ids[2]).Error).To(Succeed())
		Eventually(func() int32 { page(c, q); return src.pages.Load() - before }).WithTimeout(notified).Should(BeNumerically(">=", 1))
	})

	It("keeps no value read while a change arrived", func() {
		listen(c, src)
		src.during = c.Forget
		page(c, q)
		src.during = nil
		page(c, q)
		Expect(src.pages.Load()).To(BeEquivalentTo(2))
	})

	It("drops everything when the catalog's tables are truncated", func() {
		listen(c, src)
		Expect(page(c, q)).To(HaveLen(3))
		testkit.Truncate(db)
		Eventually(func() []string { return page(c, q) }).WithTimeout(notified).Should(BeEmpty())
	})

	It("drops everything when a write of this process returns, so it reads its own write at once", func() {
		listen(c, src)
		Expect(page(c, q)).To(HaveExactElements(ids[2], ids[1], ids[0]))
		Expect(total(c, "kept")).To(Equal(3))
		Expect(c.DeleteContainer(context.Background(), ids[2], time.Now().UTC())).To(Succeed())
		Expect(total(c, "kept")).To(Equal(2))
		Expect(page(c, q)).To(HaveExactElements(ids[1], ids[0]))
	})

	It("keeps within its bound, making room as listings come", func() {
		// A page of one card is estimated at some 450 bytes: three do not fit in 1,000.
		c, src = newCatalog(1000)
		listen(c, src)
		one := func(p int) { page(c, catalog.TemplateQuery{Mode: "kept", Page: p, PageSize: 1}) }
		for p := range 3 {
			one(p + 1)
		}
		Expect(src.pages.Load()).To(BeEquivalentTo(3))
		for p := range 3 {
			one(p + 1)
		}
		Expect(src.pages.Load()).To(BeNumerically(">", 3), "not every page was kept")
		read := src.pages.Load()
		one(3)
		Expect(src.pages.Load()).To(Equal(read), "the last page read was kept")
	})

	It("serves nothing stale after Postgres ends the listener's connection, and keeps listings again once it listens", func() {
		listen(c, src)
		Expect(total(c, "kept")).To(Equal(3))
		Expect(db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = ?`, cache.ApplicationName).Error).To(Succeed())
		Expect(db.Exec(`UPDATE containers SET is_published = false WHERE id = ?`, ids[0]).Error).To(Succeed())
		Eventually(func() int { return total(c, "kept") }).WithTimeout(notified).Should(Equal(2))
		Eventually(func() int32 {
			before := src.counts.Load()
			total(c, "kept")
			total(c, "kept")
			return src.counts.Load() - before
		}).WithTimeout(10*time.Second).Should(BeNumerically("<=", 1), "a total read twice is kept again")
	})
})
