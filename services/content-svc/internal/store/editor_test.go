package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
	"github.com/motionstudio/platform/services/content-svc/internal/editor"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
)

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// countingDB opens a second connection pool whose every statement bumps n.
func countingDB(n *atomic.Int64) *gorm.DB {
	GinkgoHelper()
	counted, err := pgdb.Open(context.Background(), pgdb.Config{DSN: dsn, MaxOpenConns: 2, MaxIdleConns: 1})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(pgdb.Close, counted)
	count := func(*gorm.DB) { n.Add(1) }
	Expect(counted.Callback().Query().After("gorm:query").Register("test:count_query", count)).To(Succeed())
	Expect(counted.Callback().Row().After("gorm:row").Register("test:count_row", count)).To(Succeed())
	Expect(counted.Callback().Raw().After("gorm:raw").Register("test:count_raw", count)).To(Succeed())
	return counted
}

// seedProject builds, through the services, a published project with the given number of
// scenes, each holding elements content and color elements.
func seedProject(ctx context.Context, scenes, elements int) string {
	GinkgoHelper()
	cat := catalog.NewService(store.NewCatalog(db), nil, time.Now, newID)
	ed := editor.NewService(store.NewEditor(db), time.Now, newID)
	slug, name, mode := "t-"+uuid.NewString()[:8], "T", "video"
	c, err := cat.CreateContainer(ctx, catalog.ContainerFields{Slug: &slug, Name: &name, PrimaryMode: &mode})
	Expect(err).NotTo(HaveOccurred())
	Expect(cat.Publish(ctx, c.ID, "test")).To(Succeed())
	w, h, d, choose := 1920, 1080, 30.0, "scenes"
	p, err := cat.CreateProject(ctx, catalog.ProjectFields{ContainerID: &c.ID, Name: &name, OriginalWidth: &w,
		OriginalHeight: &h, ProjectDurationSec: &d, ChooseMode: &choose})
	Expect(err).NotTo(HaveOccurred())
	for i := range scenes {
		key := fmt.Sprintf("s%d", i)
		sc, err := ed.CreateScene(ctx, p.ID, editor.SceneFields{Key: &key})
		Expect(err).NotTo(HaveOccurred())
		for j := range elements {
			ek, ct, color := fmt.Sprintf("e%d", j), "text", "#FFFFFF"
			_, err := ed.CreateContent(ctx, sc.ID, editor.ContentFields{Key: &ek, ContentType: &ct})
			Expect(err).NotTo(HaveOccurred())
			_, err = ed.CreateColor(ctx, sc.ID, editor.ColorFields{Key: &ek, DefaultColor: &color})
			Expect(err).NotTo(HaveOccurred())
		}
	}
	return p.ID
}

var _ = Describe("reading a project's full editor graph", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("takes the same number of queries whatever the project's size", func() {
		ctx := context.Background()
		var n atomic.Int64
		full := store.NewEditor(countingDB(&n))
		queries := func(projectID string, scenes int) int64 {
			n.Store(0)
			g, err := full.ProjectFull(ctx, projectID, false)
			Expect(err).NotTo(HaveOccurred())
			Expect(g.Scenes).To(HaveLen(scenes))
			return n.Load()
		}
		small := queries(seedProject(ctx, 1, 1), 1)
		large := queries(seedProject(ctx, 12, 6), 12)
		Expect(small).To(BeNumerically(">", 0))
		Expect(large).To(Equal(small))
		Expect(large).To(BeNumerically("<=", 12))
	})
})
