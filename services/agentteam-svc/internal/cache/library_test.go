package cache_test

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/cache"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/store"
)

// lists counts the list reads that reach the database; during, when set, runs inside each
// after the database answered, as a change arriving mid-read would.
type lists struct {
	*store.Library
	calls  atomic.Int32
	during func()
}

func (s *lists) List(ctx context.Context, q library.Query, p library.Page) ([]library.Item, error) {
	s.calls.Add(1)
	items, err := s.Library.List(ctx, q, p)
	if s.during != nil {
		s.during()
	}
	return items, err
}

// names lists the names of a page of the organization's skills read through s, in the order
// it answers them (the library's).
func (fx fixture) names(s library.Store) []string {
	GinkgoHelper()
	items, err := s.List(context.Background(), library.Query{Kind: library.Skill, OrganizationID: fx.org}, library.Page{Limit: 100})
	Expect(err).NotTo(HaveOccurred())
	names := make([]string, 0, len(items))
	for _, it := range items {
		names = append(names, it.Name)
	}
	return names
}

// skill writes one of the organization's skills named name through s and returns it.
func (fx fixture) skill(s library.Store, name string) library.Item {
	GinkgoHelper()
	now := time.Now().UTC()
	it := library.Item{
		ID: uuid.NewString(), Kind: library.Skill, OrganizationID: fx.org, Key: "k-" + uuid.NewString()[:8], Name: name, Version: "1",
		Visibility: library.PrivateToOrg, Status: library.Draft, Origin: library.Authored, Body: "b", CreatedAt: now, UpdatedAt: now,
	}
	Expect(s.Insert(context.Background(), it, audit.New(fx.org, fx.owner, "skill.authored", "Skill", it.ID, it.Key))).To(Succeed())
	return it
}

// libraryPair is a library store that writes and one that lists, and how long a write may take
// to be listed.
type libraryPair struct {
	writer, reader library.Store
	within         time.Duration
}

// The contract of library.Store's list, run against the plain store and the cached one: a list
// read after a write shows it (in another process, once notified).
var _ = DescribeTable("library lists read after writes",
	func(setup func() libraryPair) {
		fx := newFixture()
		ctx := context.Background()
		p := setup()
		sees := func(names ...string) {
			GinkgoHelper()
			read := func() []string { return fx.names(p.reader) }
			if p.within == 0 {
				Expect(read()).To(ConsistOf(names))
				return
			}
			Eventually(read).WithTimeout(p.within).Should(ConsistOf(names))
		}
		sees()
		first := fx.skill(p.writer, "first")
		sees("first")
		fx.skill(p.writer, "second")
		sees("first", "second")
		notFound := library.NewService(library.Deps{}).Library(library.Skill).NotFound()
		_, err := p.writer.Update(ctx, library.Skill, fx.org, first.Key, first.Version, notFound,
			func(it *library.Item) (audit.Entry, error) {
				it.Name = "renamed"
				return audit.New(fx.org, fx.owner, "skill.updated", "Skill", it.ID, it.Key), nil
			})
		Expect(err).NotTo(HaveOccurred())
		sees("renamed", "second")
		Expect(p.writer.Delete(ctx, []string{first.ID})).To(Succeed())
		sees("second")
	},
	Entry("the plain store", func() libraryPair {
		s := store.NewLibrary(db)
		return libraryPair{writer: s, reader: s}
	}),
	Entry("the cached store, by its own process", func() libraryPair {
		f := cache.New(maxEntries, maxEntries)
		listen(f)
		s := cache.NewLibrary(f, store.NewLibrary(db))
		return libraryPair{writer: s, reader: s}
	}),
	Entry("the cached store, across two processes", func() libraryPair {
		a, b := cache.New(maxEntries, maxEntries), cache.New(maxEntries, maxEntries)
		listen(a)
		listen(b)
		reader := cache.NewLibrary(b, store.NewLibrary(db))
		return libraryPair{writer: cache.NewLibrary(a, store.NewLibrary(db)), reader: reader, within: notified}
	}),
)

var _ = Describe("library lists kept in memory", func() {
	var (
		fx  fixture
		f   *cache.Facts
		src *lists
		lib *cache.Library
	)
	BeforeEach(func() {
		fx = newFixture()
		f = cache.New(maxEntries, maxEntries)
		src = &lists{Library: store.NewLibrary(db)}
		lib = cache.NewLibrary(f, src)
		fx.skill(store.NewLibrary(db), "one")
	})

	It("are read from the database until the listener listens, then from memory", func() {
		Expect(fx.names(lib)).To(Equal([]string{"one"}))
		fx.names(lib)
		Expect(src.calls.Load()).To(BeEquivalentTo(2))
		listen(f)
		fx.names(lib)
		Expect(fx.names(lib)).To(Equal([]string{"one"}))
		Expect(src.calls.Load()).To(BeEquivalentTo(3), "the second page came from memory")
	})

	It("keep no page read while a change arrived", func() {
		f.SetLive(true)
		src.during = func() { f.Apply("l:skill:" + fx.org) }
		fx.names(lib)
		src.during = nil
		fx.names(lib)
		fx.names(lib)
		Expect(src.calls.Load()).To(BeEquivalentTo(2), "the page read during the change was read again, the next one kept")
	})

	It("are never kept when the facts keep no pages", func() {
		f = cache.New(maxEntries, 0)
		lib = cache.NewLibrary(f, src)
		f.SetLive(true)
		fx.names(lib)
		fx.names(lib)
		Expect(src.calls.Load()).To(BeEquivalentTo(2))
	})

	It("of every organization are dropped by a change of the shared library, of one organization by its own", func() {
		f.SetLive(true)
		other := newFixture()
		profiles := func() {
			GinkgoHelper()
			_, err := lib.List(context.Background(), library.Query{Kind: library.AgentProfile, OrganizationID: fx.org}, library.Page{Limit: 10})
			Expect(err).NotTo(HaveOccurred())
		}
		fx.names(lib)
		other.names(lib)
		profiles()
		Expect(src.calls.Load()).To(BeEquivalentTo(3))
		f.Apply("l:skill:" + other.org)
		fx.names(lib)
		other.names(lib)
		profiles()
		Expect(src.calls.Load()).To(BeEquivalentTo(4), "only the other organization's page was read again")
		f.Apply("l:skill:")
		fx.names(lib)
		other.names(lib)
		profiles()
		Expect(src.calls.Load()).To(BeEquivalentTo(6), "both skill pages were read again, the agent profiles' was kept")
	})

	It("are dropped by a write of the process itself, so its next list shows it", func() {
		f.SetLive(true)
		Expect(fx.names(lib)).To(Equal([]string{"one"}))
		fx.skill(lib, "two")
		Expect(fx.names(lib)).To(ConsistOf("one", "two"))
	})
})
