package store_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
)

// countWorld holds the categories, tags and modes the totals are checked over.
type countWorld struct {
	categories, tags []string
	modes            []string
}

// countedQueries answers every filter set without search words: each combination of category,
// premium, mode and aspect (or any), each single tag alone, and a few tag pairs and tag
// combinations that are counted rather than kept.
func (w countWorld) countedQueries() []catalog.TemplateQuery {
	yes, no := true, false
	var qs []catalog.TemplateQuery
	for _, cat := range append([]string{""}, w.categories...) {
		for _, premium := range []*bool{nil, &yes, &no} {
			for _, mode := range append([]string{""}, w.modes...) {
				for _, aspect := range append([]string{""}, catalog.Aspects()...) {
					qs = append(qs, catalog.TemplateQuery{CategoryID: cat, IsPremium: premium, Mode: mode, Aspect: aspect})
				}
			}
		}
	}
	for _, t := range w.tags {
		qs = append(qs, catalog.TemplateQuery{TagIDs: []string{t}},
			catalog.TemplateQuery{TagIDs: []string{t}, CategoryID: w.categories[0]},
			catalog.TemplateQuery{TagIDs: []string{t}, IsPremium: &yes})
	}
	return append(qs, catalog.TemplateQuery{TagIDs: w.tags[:2]})
}

// countByHand counts q's templates from the links and projects themselves, not from the
// columns and counts the triggers keep.
func countByHand(tx *gorm.DB, q catalog.TemplateQuery) int {
	GinkgoHelper()
	where, args := []string{"c.is_published AND c.deleted_at IS NULL"}, []any{}
	if q.CategoryID != "" {
		where, args = append(where, "EXISTS (SELECT 1 FROM container_categories l WHERE l.container_id = c.id AND l.category_id = ?)"), append(args, q.CategoryID)
	}
	for _, t := range q.TagIDs {
		where, args = append(where, "EXISTS (SELECT 1 FROM container_tags l WHERE l.container_id = c.id AND l.tag_id = ?)"), append(args, t)
	}
	if q.IsPremium != nil {
		where, args = append(where, "c.is_premium = ?"), append(args, *q.IsPremium)
	}
	if q.Mode != "" {
		where, args = append(where, "c.primary_mode = ?"), append(args, q.Mode)
	}
	if q.Aspect != "" {
		where, args = append(where, "EXISTS (SELECT 1 FROM projects p WHERE p.container_id = c.id AND p.is_published AND p.aspect = ?)"), append(args, q.Aspect)
	}
	var n int64
	Expect(tx.Raw("SELECT count(*) FROM containers c WHERE "+strings.Join(where, " AND "), args...).Scan(&n).Error).To(Succeed())
	return int(n)
}

// expectExactTotals compares every filter set's total with a count by hand, through tx (the
// database or an open transaction).
func (w countWorld) expectExactTotals(ctx context.Context, tx *gorm.DB) {
	GinkgoHelper()
	s := store.NewCatalog(tx)
	for _, q := range w.countedQueries() {
		got, err := s.CountTemplates(ctx, q)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(countByHand(tx, q)), "filters %+v", q)
	}
}

// listByHand answers the ids of q's page (page size 2, one past it, as the store answers)
// sorted as sort says, from the links and projects themselves.
func listByHand(tx *gorm.DB, q catalog.TemplateQuery) []string {
	GinkgoHelper()
	where, args := []string{"c.is_published AND c.deleted_at IS NULL"}, []any{}
	if q.CategoryID != "" {
		where, args = append(where, "EXISTS (SELECT 1 FROM container_categories l WHERE l.container_id = c.id AND l.category_id = ?)"), append(args, q.CategoryID)
	}
	if q.IsPremium != nil {
		where, args = append(where, "c.is_premium = ?"), append(args, *q.IsPremium)
	}
	if q.Mode != "" {
		where, args = append(where, "c.primary_mode = ?"), append(args, q.Mode)
	}
	order := map[string]string{catalog.SortNewest: "c.created_at DESC, c.id DESC", catalog.SortAZ: "c.name ASC, c.id ASC"}[q.Sort]
	var ids []string
	Expect(tx.Raw("SELECT c.id FROM containers c WHERE "+strings.Join(where, " AND ")+" ORDER BY "+order+" LIMIT ? OFFSET ?",
		append(args, q.PageSize+1, (q.Page-1)*q.PageSize)...).Scan(&ids).Error).To(Succeed())
	return append([]string{}, ids...)
}

var _ = Describe("catalog totals kept per filter set", func() {
	var (
		ctx   context.Context
		svc   *catalog.Service
		world countWorld
	)

	BeforeEach(func() {
		ctx = context.Background()
		svc = catalog.NewService(store.NewCatalog(db), time.Now, newID)
		world = countWorld{modes: []string{"video", "photo", "count-" + newID()[:8]}}
		for range 3 {
			name := "Count " + newID()
			c, err := svc.CreateCategory(ctx, catalog.Category{Name: name, Slug: "c-" + newID()})
			Expect(err).NotTo(HaveOccurred())
			world.categories = append(world.categories, c.ID)
			t, err := svc.CreateTag(ctx, "t-"+newID(), name)
			Expect(err).NotTo(HaveOccurred())
			world.tags = append(world.tags, t.ID)
		}
	})

	container := func(mode string, premium bool, cats, tags []string) string {
		GinkgoHelper()
		slug, name := "n-"+newID(), "Counted"
		c, err := svc.CreateContainer(ctx, catalog.ContainerFields{Slug: &slug, Name: &name, PrimaryMode: &mode,
			IsPremium: &premium, CategoryIDs: &cats, TagIDs: &tags})
		Expect(err).NotTo(HaveOccurred())
		return c.ID
	}
	project := func(containerID, aspect string) string {
		GinkgoHelper()
		name, w, h, d, choose := "P", 1920, 1080, 30.0, "scenes"
		p, err := svc.CreateProject(ctx, catalog.ProjectFields{ContainerID: &containerID, Name: &name, Aspect: &aspect,
			OriginalWidth: &w, OriginalHeight: &h, ProjectDurationSec: &d, ChooseMode: &choose})
		Expect(err).NotTo(HaveOccurred())
		return p.ID
	}

	It("are exact after every kind of catalog write", func() {
		cats, tags, modes := world.categories, world.tags, world.modes
		a := container(modes[0], false, cats[:2], tags[:2])
		b := container(modes[1], true, cats[1:], tags[1:])
		c := container(modes[2], true, nil, nil)
		world.expectExactTotals(ctx, db)

		By("publishing")
		for _, id := range []string{a, b, c} {
			Expect(svc.Publish(ctx, id, "test")).To(Succeed())
		}
		world.expectExactTotals(ctx, db)

		By("adding, changing, unpublishing and deleting projects")
		pa := project(a, "16:9")
		project(a, "9:16")
		project(a, "16:9")
		pb := project(b, "1:1")
		world.expectExactTotals(ctx, db)
		aspect := "4:5"
		_, err := svc.UpdateProject(ctx, pa, catalog.ProjectFields{Aspect: &aspect})
		Expect(err).NotTo(HaveOccurred())
		world.expectExactTotals(ctx, db)
		off := false
		_, err = svc.UpdateProject(ctx, pb, catalog.ProjectFields{IsPublished: &off})
		Expect(err).NotTo(HaveOccurred())
		world.expectExactTotals(ctx, db)
		Expect(svc.DeleteProject(ctx, pa)).To(Succeed())
		world.expectExactTotals(ctx, db)

		By("changing categories, tags, premium and mode")
		newCats, newTags, premium, mode := []string{cats[2]}, []string{tags[0], tags[2]}, true, modes[1]
		_, err = svc.UpdateContainer(ctx, a, catalog.ContainerFields{CategoryIDs: &newCats, TagIDs: &newTags, IsPremium: &premium, PrimaryMode: &mode})
		Expect(err).NotTo(HaveOccurred())
		world.expectExactTotals(ctx, db)
		premium, noCats := false, []string{}
		_, err = svc.UpdateContainer(ctx, b, catalog.ContainerFields{IsPremium: &premium, CategoryIDs: &noCats})
		Expect(err).NotTo(HaveOccurred())
		world.expectExactTotals(ctx, db)

		By("unpublishing, publishing again and soft-deleting")
		Expect(svc.Unpublish(ctx, b, "reason", "test")).To(Succeed())
		world.expectExactTotals(ctx, db)
		Expect(svc.Publish(ctx, b, "test")).To(Succeed())
		world.expectExactTotals(ctx, db)
		Expect(svc.DeleteContainer(ctx, c)).To(Succeed())
		world.expectExactTotals(ctx, db)

		By("writes that move nothing in the catalog")
		Expect(db.Exec(`UPDATE containers SET rate_avg = 4.5, use_count = use_count + 1 WHERE id IN (?, ?)`, a, b).Error).To(Succeed())
		world.expectExactTotals(ctx, db)

		By("deleting rows outright")
		Expect(db.Exec(`DELETE FROM containers WHERE id = ?`, a).Error).To(Succeed())
		world.expectExactTotals(ctx, db)
	})

	It("answers every kept filter set's pages as a listing by hand does, and nothing past the last match", func() {
		cats, tags, modes := world.categories, world.tags, world.modes
		for i := range 7 {
			id := container(modes[i%len(modes)], i%2 == 0, cats[:1+i%len(cats)], tags[:1])
			Expect(svc.Publish(ctx, id, "test")).To(Succeed())
		}
		s := store.NewCatalog(db)
		yes := true
		for _, cat := range append([]string{""}, cats...) {
			for _, premium := range []*bool{nil, &yes} {
				for _, mode := range append([]string{""}, modes...) {
					for _, sort := range []string{catalog.SortNewest, catalog.SortAZ} {
						for page := 1; page <= 4; page++ {
							q := catalog.TemplateQuery{CategoryID: cat, IsPremium: premium, Mode: mode, Sort: sort, Page: page, PageSize: 2}
							cards, err := s.Templates(ctx, q)
							Expect(err).NotTo(HaveOccurred())
							ids := make([]string, len(cards))
							for i, c := range cards {
								ids[i] = c.ContainerID
							}
							Expect(ids).To(Equal(listByHand(db, q)), "%+v", q)
						}
					}
				}
			}
		}
	})

	It("finds a filter's pages when its matches cluster at the far end of the sort order", func() {
		named := func(name string, cats []string) {
			GinkgoHelper()
			slug, mode, premium, tags := "n-"+newID(), world.modes[0], false, []string{}
			c, err := svc.CreateContainer(ctx, catalog.ContainerFields{Slug: &slug, Name: &name, PrimaryMode: &mode,
				IsPremium: &premium, CategoryIDs: &cats, TagIDs: &tags})
			Expect(err).NotTo(HaveOccurred())
			Expect(svc.Publish(ctx, c.ID, "test")).To(Succeed())
		}
		for i := range 30 {
			named(fmt.Sprintf("AAA %02d", i), nil)
			named(fmt.Sprintf("ZZZ %02d", i), world.categories[:1])
		}
		s := store.NewCatalog(db)
		for page := 1; page <= 16; page++ {
			q := catalog.TemplateQuery{CategoryID: world.categories[0], Sort: catalog.SortAZ, Page: page, PageSize: 2}
			cards, err := s.Templates(ctx, q)
			Expect(err).NotTo(HaveOccurred())
			ids := make([]string, len(cards))
			for i, c := range cards {
				ids[i] = c.ContainerID
			}
			Expect(ids).To(Equal(listByHand(db, q)), "page %d", page)
		}
	})

	It("are exact after bulk statements, inside the writing transaction", func() {
		Expect(db.Transaction(func(tx *gorm.DB) error {
			defer GinkgoRecover()
			Expect(tx.Exec(`
				INSERT INTO containers (id, slug, name, is_published, is_premium, primary_mode)
				SELECT gen_random_uuid(), 'bulk-' || g || '-' || ?, 'Bulk', g % 4 <> 0, g % 3 = 0, (ARRAY[?, ?])[g % 2 + 1]
				FROM generate_series(1, 200) g`, newID(), world.modes[0], world.modes[1]).Error).To(Succeed())
			Expect(tx.Exec(`INSERT INTO container_categories (container_id, category_id)
				SELECT c.id, k.id FROM containers c JOIN categories k ON k.id IN (?, ?)
				WHERE c.slug LIKE 'bulk-%' AND (hashtext(c.id::text || k.id::text) % 2 = 0)`, world.categories[0], world.categories[1]).Error).To(Succeed())
			Expect(tx.Exec(`INSERT INTO container_tags (container_id, tag_id)
				SELECT c.id, t.id FROM containers c JOIN tags t ON t.id IN (?, ?, ?)
				WHERE c.slug LIKE 'bulk-%' AND (hashtext(t.id::text || c.id::text) % 3 = 0)`, world.tags[0], world.tags[1], world.tags[2]).Error).To(Succeed())
			Expect(tx.Exec(`INSERT INTO projects (id, container_id, name, aspect, original_width, original_height, project_duration_sec, choose_mode)
				SELECT gen_random_uuid(), c.id, 'P', a, 1, 1, 1, 'scenes' FROM containers c
				CROSS JOIN unnest(ARRAY['16:9', '9:16', '16:9']) a WHERE c.slug LIKE 'bulk-%' AND hashtext(c.id::text || a) % 2 = 0`).Error).To(Succeed())
			world.expectExactTotals(ctx, tx)

			Expect(tx.Exec(`UPDATE containers SET is_premium = NOT is_premium, is_published = NOT is_published WHERE slug LIKE 'bulk-%' AND hashtext(id::text) % 2 = 0`).Error).To(Succeed())
			Expect(tx.Exec(`UPDATE projects SET is_published = false WHERE aspect = '9:16' AND container_id IN (SELECT id FROM containers WHERE slug LIKE 'bulk-%')`).Error).To(Succeed())
			Expect(tx.Exec(`DELETE FROM container_categories WHERE category_id = ?`, world.categories[0]).Error).To(Succeed())
			world.expectExactTotals(ctx, tx)

			Expect(tx.Exec(`UPDATE containers SET deleted_at = now() WHERE slug LIKE 'bulk-%' AND hashtext(id::text) % 5 = 0`).Error).To(Succeed())
			Expect(tx.Exec(`DELETE FROM containers WHERE slug LIKE 'bulk-%' AND hashtext(id::text) % 7 = 0`).Error).To(Succeed())
			world.expectExactTotals(ctx, tx)
			return nil
		})).To(Succeed())
		world.expectExactTotals(ctx, db)
	})
})
