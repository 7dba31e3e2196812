package cache_test

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/internal/cache"
	"github.com/motionstudio/platform/services/content-svc/internal/editor"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
)

// fullReads counts the whole graphs read from the store.
type fullReads struct {
	editor.Store
	n atomic.Int32
}

func (f *fullReads) ProjectFull(ctx context.Context, projectID string, privileged bool) (editor.ProjectFull, error) {
	f.n.Add(1)
	return f.Store.ProjectFull(ctx, projectID, privileged)
}

// graphPair is an editor store that writes and one that reads whole graphs.
type graphPair struct{ writer, reader editor.Store }

// publishedProject inserts a published template with one project and answers their ids.
func publishedProject() (container, project string) {
	GinkgoHelper()
	container, project = uuid.NewString(), uuid.NewString()
	Expect(db.Exec(`INSERT INTO containers (id, slug, name, primary_mode, is_published) VALUES (?, ?, 'Graph', 'video', true)`,
		container, "graph-"+container[:8]).Error).To(Succeed())
	Expect(db.Exec(`INSERT INTO projects (id, container_id, name, original_width, original_height, project_duration_sec, choose_mode, is_published)
		VALUES (?, ?, 'Landscape', 1920, 1080, 30, 'scenes', true)`, project, container).Error).To(Succeed())
	return container, project
}

// addScene adds a scene to the project through s.
func addScene(s editor.Store, project string) {
	GinkgoHelper()
	key := "s-" + uuid.NewString()[:8]
	_, err := editor.NewService(s, time.Now, uuid.NewString).CreateScene(context.Background(), project, editor.SceneFields{Key: &key})
	Expect(err).NotTo(HaveOccurred())
}

// The contract of editor.Store's ProjectFull, run against the plain store and the decorated
// one: a graph read after a write shows it at once, in the writing process and in another one
// (every read asks for the editor version), and a project that stops being visible is not
// answered.
var _ = DescribeTable("whole editor graphs read after writes",
	func(setup func() graphPair) {
		testkit.Truncate(db)
		ctx := context.Background()
		p := setup()
		container, project := publishedProject()
		scenes := func() int {
			GinkgoHelper()
			g, err := p.reader.ProjectFull(ctx, project, false)
			Expect(err).NotTo(HaveOccurred())
			return len(g.Scenes)
		}
		Expect(scenes()).To(BeZero())
		Expect(scenes()).To(BeZero())
		addScene(p.writer, project)
		Expect(scenes()).To(Equal(1))
		Expect(db.Exec(`UPDATE containers SET is_published = false WHERE id = ?`, container).Error).To(Succeed())
		_, err := p.reader.ProjectFull(ctx, project, false)
		Expect(apperr.Is(err, apperr.NotFound)).To(BeTrue(), "an unpublished template's project")
		g, err := p.reader.ProjectFull(ctx, project, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(g.Scenes).To(HaveLen(1), "still there for an administrator")
	},
	Entry("the plain store", func() graphPair {
		s := store.NewEditor(db)
		return graphPair{writer: s, reader: s}
	}),
	Entry("the decorated store, by its own process", func() graphPair {
		s := cache.NewGraphs(store.NewEditor(db), cache.GraphRecords)
		return graphPair{writer: s, reader: s}
	}),
	Entry("the decorated store, across two processes", func() graphPair {
		return graphPair{writer: cache.NewGraphs(store.NewEditor(db), cache.GraphRecords), reader: cache.NewGraphs(store.NewEditor(db), cache.GraphRecords)}
	}),
)

var _ = Describe("whole editor graphs kept in memory", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("are read from the store once per editor version, and not kept when told to keep none", func() {
		ctx := context.Background()
		_, project := publishedProject()
		reads := &fullReads{Store: store.NewEditor(db)}
		graphs := cache.NewGraphs(reads, cache.GraphRecords)
		for range 3 {
			_, err := graphs.ProjectFull(ctx, project, false)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(reads.n.Load()).To(BeEquivalentTo(1))
		addScene(store.NewEditor(db), project)
		g, err := graphs.ProjectFull(ctx, project, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(g.Scenes).To(HaveLen(1))
		Expect(reads.n.Load()).To(BeEquivalentTo(2))

		none := cache.NewGraphs(reads, 0)
		for range 2 {
			_, err := none.ProjectFull(ctx, project, false)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(reads.n.Load()).To(BeEquivalentTo(4))
	})
})
