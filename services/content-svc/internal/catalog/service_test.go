package catalog_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

func fieldsOf(err error) []string {
	GinkgoHelper()
	e, ok := apperr.As(err)
	Expect(ok).To(BeTrue())
	Expect(e.Kind).To(Equal(apperr.Invalid))
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field)
	}
	return out
}

var _ = Describe("aspect ratios", func() {
	DescribeTable("are named from a width and height",
		func(w, h int, want string) { Expect(catalog.AspectOf(w, h)).To(Equal(want)) },
		Entry("full HD landscape", 1920, 1080, "16:9"),
		Entry("4K landscape", 3840, 2160, "16:9"),
		Entry("vertical story", 1080, 1920, "9:16"),
		Entry("square", 1080, 1080, "1:1"),
		Entry("portrait post", 1080, 1350, "4:5"),
		Entry("anything else", 1000, 300, ""),
		Entry("no size", 0, 1080, ""),
	)
})

var _ = Describe("input checks", func() {
	// Input is refused before the store is reached, so no store is needed.
	svc := catalog.NewService(nil, nil, time.Now, func() string { return "id" })
	ctx := context.Background()
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }

	It("name every problem of a container at once", func() {
		_, err := svc.CreateContainer(ctx, catalog.ContainerFields{Slug: str("Bad Slug"), CategoryIDs: &[]string{"x"}})
		Expect(fieldsOf(err)).To(ConsistOf("slug", "name", "primary_mode", "category_ids"))
	})

	It("refuse unknown sorts and aspects and out-of-range paging in the catalog", func() {
		_, err := svc.Templates(ctx, catalog.TemplateFilter{Sort: "best", Aspect: "3:2", Page: num(0), PageSize: num(101)})
		Expect(fieldsOf(err)).To(ConsistOf("sort", "aspect", "page", "page_size"))
	})

	It("refuse a project without its required fields or with a minimum above its maximum", func() {
		_, err := svc.CreateProject(ctx, catalog.ProjectFields{Name: str("P")})
		Expect(fieldsOf(err)).To(ConsistOf("container_id", "choose_mode", "original_width", "original_height", "project_duration_sec"))
		lo, hi := 20.0, 10.0
		w, d := 1920, 30.0
		_, err = svc.CreateProject(ctx, catalog.ProjectFields{ContainerID: str("c"), Name: str("P"), ChooseMode: str("m"),
			OriginalWidth: &w, OriginalHeight: &w, ProjectDurationSec: &d, MinDurationSec: &lo, MaxDurationSec: &hi})
		Expect(fieldsOf(err)).To(ConsistOf("min_duration_sec"))
	})

	It("refuse a related-templates limit outside 1..50", func() {
		_, err := svc.RelatedTemplates(ctx, "c", num(51))
		Expect(fieldsOf(err)).To(ConsistOf("limit"))
	})
})
