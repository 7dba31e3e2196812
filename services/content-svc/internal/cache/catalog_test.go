package cache_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/internal/cache"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
	"github.com/motionstudio/platform/services/content-svc/internal/store/storetest"
)

// notified bounds how long a committed change takes to reach an index that listens.
const notified = 2 * time.Second

// reread bounds how long a committed change takes to reach the index and make it read the
// whole catalog again: a notification, a failed pass and a whole read, which under CI's load
// (every suite at once) once took more than notified.
const reread = 10 * time.Second

// lister counts the catalog's whole reads; panics, while above zero, makes that many reads of
// changes panic as their first row arrives; gate, when set, holds every whole read but the
// first until it is closed; middle, when set, hands on the changed templates whose name has it
// in the middle of their batch, and batch tells how many templates the last batch had.
type lister struct {
	*store.Catalog
	reads  atomic.Int32
	panics atomic.Int32
	gate   chan struct{}
	middle string
	batch  atomic.Int32
}

func (l *lister) Listing(ctx context.Context, max int, size func(int), v func(catalog.ListingRow) error) (catalog.ListingVersion, int, error) {
	if l.reads.Add(1) > 1 && l.gate != nil {
		select {
		case <-l.gate:
		case <-ctx.Done():
			return catalog.ListingVersion{}, 0, ctx.Err()
		}
	}
	return l.Catalog.Listing(ctx, max, size, v)
}

func (l *lister) ListingChanges(ctx context.Context, since catalog.ListingVersion, v func(catalog.ListingRow) error) (catalog.ListingVersion, error) {
	var rows, middle []catalog.ListingRow
	at, err := l.Catalog.ListingChanges(ctx, since, func(r catalog.ListingRow) error {
		if l.panics.Add(-1) >= 0 {
			panic("a bug in the index")
		}
		if l.middle != "" && strings.Contains(r.Card.Name, l.middle) {
			middle = append(middle, r)
		} else {
			rows = append(rows, r)
		}
		return nil
	})
	rows = slices.Insert(rows, len(rows)/2, middle...)
	l.batch.Store(int32(len(rows))) // #nosec G115 -- a few rows
	for _, r := range rows {
		if err := v(r); err != nil {
			return at, err
		}
	}
	return at, err
}

// logs collects what an index logs.
type logs struct {
	mu   sync.Mutex
	text []byte
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text = append(l.text, p...)
	GinkgoWriter.Write(p)
	return len(p), nil
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.text)
}

// process is one content-svc process's catalog: its index, what it reads and logs.
type process struct {
	c    *cache.Catalog
	list *lister
	logs *logs
}

// newProcess returns a process's catalog with opts, not yet running.
func newProcess(opts cache.Options) *process {
	GinkgoHelper()
	return newProcessOn(db, opts)
}

// newProcessOn returns a process's catalog with opts over the database conn, not yet running.
func newProcessOn(conn *gorm.DB, opts cache.Options) *process {
	GinkgoHelper()
	p := &process{list: &lister{Catalog: store.NewCatalog(conn)}, logs: &logs{}}
	var err error
	p.c, err = cache.NewCatalog(store.NewCatalog(conn), p.list, opts, slog.New(slog.NewTextHandler(p.logs, nil)), prometheus.NewRegistry())
	Expect(err).NotTo(HaveOccurred())
	return p
}

// run keeps the process's index until the spec ends and, when listening, runs its listener.
func (p *process) run(listening bool) {
	GinkgoHelper()
	testkit.RunUntilCleanup(p.c.Run)
	if listening {
		l, err := cache.NewListener(p.c, dsn, slog.New(slog.NewTextHandler(GinkgoWriter, nil)), prometheus.NewRegistry())
		Expect(err).NotTo(HaveOccurred())
		testkit.RunUntilCleanup(l.Run)
	}
	Eventually(p.c.Ready).WithArguments(context.Background()).WithTimeout(10 * time.Second).Should(Succeed())
}

// page answers q's page and total from c as "<total>:<has more>:<cards>".
func page(c catalog.Listings, q catalog.TemplateQuery) string {
	GinkgoHelper()
	cards, total, err := c.Templates(context.Background(), q)
	Expect(err).NotTo(HaveOccurred())
	return fmt.Sprintf("%d:%v:%+v", total, len(cards) > q.PageSize, cards)
}

// related answers the templates related to id from c, up to limit, as their cards or the error's
// kind and code.
func related(c catalog.Listings, id string, limit int) string {
	GinkgoHelper()
	cards, err := c.Related(context.Background(), id, limit)
	if e, ok := apperr.As(err); ok {
		return fmt.Sprintf("%s %s", e.Kind, e.Code)
	}
	Expect(err).NotTo(HaveOccurred())
	return fmt.Sprintf("%+v", cards)
}

// oracle answers q as page does, by SQL.
func oracle(q catalog.TemplateQuery) string {
	GinkgoHelper()
	return page(storetest.Listing{DB: db}, q)
}

// every is the first page of 50 of the newest catalog templates.
var every = catalog.TemplateQuery{Sort: catalog.SortNewest, Page: 1, PageSize: 50}

// index bounds the seeded catalog.
var index = cache.Options{MaxTemplates: 1000, Poll: time.Hour}

var _ = Describe("the catalog's read model", func() {
	BeforeEach(func() {
		testkit.Truncate(db)
		Expect(db.Exec(seedCatalog).Error).To(Succeed())
	})

	It("is not ready and answers listings 503 until the catalog is first read", func() {
		p := newProcess(index)
		Expect(p.c.Ready(context.Background())).To(MatchError(ContainSubstring("not read yet")))
		_, _, err := p.c.Templates(context.Background(), every)
		e, ok := apperr.As(err)
		Expect(ok).To(BeTrue())
		Expect(e.Kind).To(Equal(apperr.Unavailable))

		p.run(false)
		Expect(page(p.c, every)).To(Equal(oracle(every)))
	})

	It("fails readiness loudly for a catalog larger than its bound, reading none of it", func() {
		p := newProcess(cache.Options{MaxTemplates: 100, Poll: time.Hour})
		testkit.RunUntilCleanup(p.c.Run)
		Eventually(p.c.Ready).WithArguments(context.Background()).Should(MatchError(ContainSubstring("more than CATALOG_INDEX_MAX_TEMPLATES (100)")))
		Consistently(p.c.Ready).WithArguments(context.Background()).WithTimeout(300 * time.Millisecond).Should(HaveOccurred())
		Expect(p.logs.String()).To(ContainSubstring("level=ERROR msg=\"catalog larger than its bound: not ready\""))
		_, _, err := p.c.Templates(context.Background(), every)
		Expect(err).To(HaveOccurred())
	})

	It("answers every template's card from memory, the least used ones' too, its database closed", func() {
		conn, err := pgdb.Open(context.Background(), pgdb.Config{DSN: dsn, MaxOpenConns: 2, MaxIdleConns: 2})
		Expect(err).NotTo(HaveOccurred())
		p := newProcessOn(conn, index)
		p.run(false)
		Expect(pgdb.Close(conn)).To(Succeed()) // a listing that read Postgres would fail
		for n := 1; ; n++ {
			q := catalog.TemplateQuery{Sort: catalog.SortPopular, Page: n, PageSize: 40}
			want := oracle(q)
			Expect(page(p.c, q)).To(Equal(want))
			if strings.Split(want, ":")[1] == "false" {
				break
			}
		}
		search := catalog.TemplateQuery{Words: []string{"wed"}, TagIDs: []string{"00000000-0000-4000-9000-000000000002"}, Sort: catalog.SortRelevance, Page: 2, PageSize: 5}
		Expect(page(p.c, search)).To(Equal(oracle(search)))
	})

	It("shows a write of its own process when the write returns", func() {
		p := newProcess(index)
		p.run(false) // no notification and no poll: only the write itself brings the index up to date
		first, _, err := p.c.Templates(context.Background(), every)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.c.DeleteContainer(context.Background(), first[0].ContainerID, time.Now().UTC())).To(Succeed())
		Expect(page(p.c, every)).To(Equal(oracle(every)))
		Expect(p.list.reads.Load()).To(BeEquivalentTo(1), "applied in place, not read again")
	})

	It("applies another process's change once notified, in place", func() {
		p := newProcess(index)
		p.run(true)
		Expect(db.Exec(`UPDATE containers SET name = 'Zebra intro', use_count = 100 WHERE id = (SELECT id FROM containers WHERE is_published AND deleted_at IS NULL LIMIT 1)`).Error).To(Succeed())
		search := catalog.TemplateQuery{Words: []string{"zeb"}, Sort: catalog.SortRelevance, Page: 1, PageSize: 5}
		Eventually(func() string { return page(p.c, search) }).WithTimeout(notified).Should(Equal(oracle(search)))
		Expect(page(p.c, search)).To(HavePrefix("1:"))
		Expect(p.list.reads.Load()).To(BeEquivalentTo(1))
	})

	It("shows another process's commit within milliseconds, one change after another", func() {
		p := newProcess(index)
		p.run(true)
		var ids []string
		Expect(db.Raw(`SELECT id FROM containers WHERE is_published AND deleted_at IS NULL ORDER BY id LIMIT 60`).Scan(&ids).Error).To(Succeed())
		popular := catalog.TemplateQuery{Sort: catalog.SortPopular, Page: 1, PageSize: 1}
		var took []time.Duration
		for i, id := range ids {
			Expect(db.Exec(`UPDATE containers SET use_count = ? WHERE id = ?`, 1000+i, id).Error).To(Succeed())
			committed := time.Now()
			Eventually(func() string {
				cards, _, err := p.c.Templates(context.Background(), popular)
				Expect(err).NotTo(HaveOccurred())
				return cards[0].ContainerID
			}).WithTimeout(notified).WithPolling(100 * time.Microsecond).Should(Equal(id))
			took = append(took, time.Since(committed))
		}
		slices.Sort(took)
		AddReportEntry("commit to visible", fmt.Sprintf("p50 %v, p99 %v over %d changes", took[len(took)/2], took[len(took)*99/100], len(took)))
		Expect(took[len(took)*99/100]).To(BeNumerically("<", notified))
		Expect(page(p.c, every)).To(Equal(oracle(every)))
		Expect(p.list.reads.Load()).To(BeEquivalentTo(1))
	})

	It("makes up a lost notification at the next poll", func() {
		p := newProcess(cache.Options{MaxTemplates: 1000, Poll: 200 * time.Millisecond})
		p.run(false) // every notification is lost
		Expect(db.Exec(`UPDATE containers SET is_premium = NOT is_premium WHERE is_published`).Error).To(Succeed())
		premium := catalog.TemplateQuery{IsPremium: ptr(true), Sort: catalog.SortAZ, Page: 2, PageSize: 10}
		Eventually(func() string { return page(p.c, premium) }).WithTimeout(notified).Should(Equal(oracle(premium)))
		Expect(p.list.reads.Load()).To(BeEquivalentTo(1), "read from the log, not again")
	})

	It("reads the catalog again in place, once, when the log no longer holds the changes since its version, and is exact", func() {
		p := newProcess(index)
		p.run(false) // no notification and no poll: Sync alone makes it read the log
		held := cache.Held(p.c)
		uses := db.Exec(`UPDATE containers SET use_count = use_count + 7 WHERE is_published AND deleted_at IS NULL AND name LIKE 'W%'`)
		Expect(uses.Error).To(Succeed())
		Expect(db.Exec(`DELETE FROM catalog_changes`).Error).To(Succeed()) // pruned before the process read it
		rated := db.Exec(`UPDATE containers SET rate_avg = 4.9 WHERE is_published AND deleted_at IS NULL AND name LIKE 'T%' AND rate_avg <> 4.9`)
		Expect(rated.Error).To(Succeed())
		Expect(uses.RowsAffected * rated.RowsAffected).To(BeNumerically(">", 0))
		p.c.Sync(context.Background())
		Expect(cache.Held(p.c)).To(BeIdenticalTo(held), "applied to the index it held, not read into a second one")
		Expect(p.logs.String()).To(ContainSubstring(fmt.Sprintf("changed=%d removed=0", uses.RowsAffected+rated.RowsAffected)),
			"only the templates that differ are applied")
		popular := catalog.TemplateQuery{Sort: catalog.SortPopular, Page: 1, PageSize: 30}
		Expect(page(p.c, popular)).To(Equal(oracle(popular)))
		rate := catalog.TemplateQuery{Sort: catalog.SortRate, Page: 1, PageSize: 30}
		Expect(page(p.c, rate)).To(Equal(oracle(rate)))
		Expect(p.list.reads.Load()).To(BeEquivalentTo(2))
		Expect(p.logs.String()).To(ContainSubstring("catalog changes not in the log"))
	})

	It("reads the catalog into a new index when a change it reads in place fails to apply, and is exact", func() {
		p := newProcess(index)
		p.run(false) // no notification and no poll: Sync alone makes it read the log
		held := cache.Held(p.c)
		cache.BreakLastWords(p.c)
		Expect(db.Exec(`UPDATE containers SET name = 'Zyzzyva party' WHERE id = (SELECT id FROM containers WHERE is_published AND deleted_at IS NULL ORDER BY id LIMIT 1)`).Error).To(Succeed())
		Expect(db.Exec(`DELETE FROM catalog_changes`).Error).To(Succeed())
		p.c.Sync(context.Background())
		Eventually(func() any { return cache.Held(p.c) }).WithTimeout(reread).ShouldNot(BeIdenticalTo(held))
		zyzzyva := catalog.TemplateQuery{Words: []string{"zyzz"}, Sort: catalog.SortRelevance, Page: 1, PageSize: 5}
		Expect(page(p.c, zyzzyva)).To(Equal(oracle(zyzzyva)))
		Expect(page(p.c, every)).To(Equal(oracle(every)))
		Expect(p.logs.String()).To(ContainSubstring("applying catalog changes failed (1 changes reading the catalog again)"))
		Expect(strings.Count(p.logs.String(), `msg="catalog index read" `)).To(Equal(2), "the first read and the read into a new index")
	})

	It("reads the catalog again when its tables are truncated", func() {
		p := newProcess(index)
		p.run(true)
		testkit.Truncate(db)
		Expect(db.Exec(seedCatalog).Error).To(Succeed())
		Eventually(func() string { return page(p.c, every) }).WithTimeout(notified).Should(Equal(oracle(every)))
		Expect(p.logs.String()).To(MatchRegexp(`msg="catalog index read again in place" .* removed=[1-9]`),
			"the templates that were truncated are taken out")
	})

	It("catches up on what changed while its listener was disconnected, once it listens again", func() {
		p := newProcess(index) // no poll: only the reconnection finds the change
		p.run(true)
		Eventually(func() int64 {
			var n int64
			Expect(db.Raw(`SELECT count(*) FROM pg_stat_activity WHERE application_name = ? AND datname = current_database()`, cache.ApplicationName).Scan(&n).Error).To(Succeed())
			return n
		}).Should(BeEquivalentTo(1))
		Expect(db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ? AND datname = current_database()`,
			cache.ApplicationName).Error).To(Succeed())
		Expect(db.Exec(`UPDATE containers SET deleted_at = now() WHERE is_published AND name LIKE 'L%'`).Error).To(Succeed())
		Eventually(func() string { return page(p.c, every) }).WithTimeout(5 * time.Second).Should(Equal(oracle(every)))
	})

	It("keeps answering from its last good index when reading changes panics, logs it and reads the catalog again", func() {
		p := newProcess(index)
		p.list.gate = make(chan struct{})
		p.run(true)
		before := page(p.c, every)
		p.list.panics.Store(1)
		Expect(db.Exec(`UPDATE containers SET created_at = now() + interval '1 day' WHERE is_published AND name LIKE 'P%'`).Error).To(Succeed())
		Eventually(p.list.reads.Load).WithTimeout(reread).Should(BeEquivalentTo(2))
		Expect(page(p.c, every)).To(Equal(before), "the last good index answers while the catalog is read again")
		Expect(p.c.Ready(context.Background())).To(Succeed())
		close(p.list.gate)
		Eventually(func() string { return page(p.c, every) }).WithTimeout(notified).Should(Equal(oracle(every)))
		Expect(page(p.c, every)).NotTo(Equal(before))
		Expect(p.logs.String()).To(ContainSubstring("level=ERROR msg=\"catalog index failed; reading the catalog again\""))
		Expect(p.logs.String()).To(ContainSubstring("a bug in the index"))
	})

	It("gives a listing's scratch back when the listing panics, so that the listings after it do not wait", func() {
		p := newProcess(index)
		p.run(true)
		// A bug a search trips on: a search past every word held panics until the index is read again.
		cache.BreakLastWords(p.c)
		search := catalog.TemplateQuery{Words: []string{"zyzz"}, Sort: catalog.SortRelevance, Page: 1, PageSize: 5}
		for range 3 * runtime.GOMAXPROCS(0) {
			Expect(func() { _, _, _ = p.c.Templates(context.Background(), search) }).To(Panic())
		}
		answered := make(chan error, 1)
		go func() {
			_, _, err := p.c.Templates(context.Background(), every)
			answered <- err
		}()
		Eventually(answered).WithTimeout(notified).Should(Receive(BeNil()))
	})

	It("answers a listing that waits for a scratch past its deadline with the deadline's error", func() {
		p := newProcess(index)
		p.run(true)
		held := cache.HoldScratches(p.c)
		defer held()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, _, err := p.c.Templates(ctx, every)
		Expect(err).To(MatchError(context.DeadlineExceeded))
	})

	It("answers no listing and is not ready when a failed batch cannot be undone, until the catalog is read again", func() {
		p := newProcess(index)
		p.list.gate = make(chan struct{})
		p.run(false)
		var id string
		Expect(db.Raw(`SELECT id::text FROM containers WHERE is_published AND deleted_at IS NULL ORDER BY id LIMIT 1`).Scan(&id).Error).To(Succeed())
		cache.LosePlace(p.c, id)
		Expect(db.Exec(`UPDATE containers SET use_count = use_count + 1 WHERE id = ?`, id).Error).To(Succeed())
		p.c.Sync(context.Background())
		Eventually(p.list.reads.Load).WithTimeout(reread).Should(BeEquivalentTo(2))
		Expect(p.c.Ready(context.Background())).To(MatchError(ContainSubstring("could not be put back")))
		_, _, err := p.c.Templates(context.Background(), every)
		e, ok := apperr.As(err)
		Expect(ok).To(BeTrue())
		Expect(e.Kind).To(Equal(apperr.Unavailable))
		Expect(p.logs.String()).To(ContainSubstring("level=ERROR msg=\"catalog index failed; reading the catalog again\""))
		close(p.list.gate)
		Eventually(p.c.Ready).WithArguments(context.Background()).WithTimeout(reread).Should(Succeed())
		Expect(page(p.c, every)).To(Equal(oracle(every)))
	})

	It("undoes a batch whose change in the middle panics half applied, keeps answering as before it, logs it and reads the catalog again", func() {
		p := newProcess(index)
		p.list.gate = make(chan struct{})
		p.list.middle = "Zyzzyva"
		p.run(false) // no notification and no poll: Sync alone makes it read the log
		queries := []catalog.TemplateQuery{every,
			{Sort: catalog.SortPopular, Page: 1, PageSize: 20},
			{Sort: catalog.SortAZ, Page: 2, PageSize: 20},
			{Sort: catalog.SortRate, Page: 1, PageSize: 20, TagIDs: []string{"00000000-0000-4000-9000-000000000002"}},
			{Sort: catalog.SortNewest, Page: 1, PageSize: 20, IsPremium: ptr(true)}}
		before := make([]string, len(queries))
		for i, q := range queries {
			before[i] = page(p.c, q)
		}
		cache.BreakLastWords(p.c)
		Expect(db.Transaction(func(tx *gorm.DB) error {
			for _, stmt := range []string{
				`UPDATE containers SET use_count = 500 + (random() * 100)::int WHERE id IN (SELECT id FROM containers WHERE is_published AND deleted_at IS NULL ORDER BY id LIMIT 4)`,
				`UPDATE containers SET name = 'Zyzzyva party', is_premium = true WHERE id = (SELECT id FROM containers WHERE is_published AND deleted_at IS NULL ORDER BY id DESC LIMIT 1)`,
				`UPDATE containers SET deleted_at = now() WHERE id IN (SELECT id FROM containers WHERE is_published AND deleted_at IS NULL ORDER BY id DESC OFFSET 1 LIMIT 3)`,
			} {
				if err := tx.Exec(stmt).Error; err != nil {
					return err
				}
			}
			return nil
		})).To(Succeed())
		p.c.Sync(context.Background())
		Expect(p.list.batch.Load()).To(BeEquivalentTo(8), "four changed, one renamed (in the middle), three deleted")
		Eventually(p.list.reads.Load).WithTimeout(reread).Should(BeEquivalentTo(2))
		for i, q := range queries {
			Expect(page(p.c, q)).To(Equal(before[i]), "the index as before the batch answers while the catalog is read again: %+v", q)
		}
		Expect(p.c.Ready(context.Background())).To(Succeed())
		Expect(p.logs.String()).To(ContainSubstring("level=ERROR msg=\"catalog index failed; reading the catalog again\""))
		Expect(p.logs.String()).To(ContainSubstring("applying catalog changes failed (8 changes"))
		close(p.list.gate)
		for _, q := range append(queries, catalog.TemplateQuery{Words: []string{"zyzz"}, Sort: catalog.SortRelevance, Page: 1, PageSize: 5}) {
			Eventually(func() string { return page(p.c, q) }).WithTimeout(notified).Should(Equal(oracle(q)))
		}
		Expect(page(p.c, queries[1])).NotTo(Equal(before[1]))
	})

})

func ptr[T any](v T) *T { return &v }
