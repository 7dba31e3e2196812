package check_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
)

// problems answers the field errors of an Invalid error as "field: message".
func problems(err error) []string {
	GinkgoHelper()
	e, ok := apperr.As(err)
	Expect(ok).To(BeTrue())
	Expect(e.Kind).To(Equal(apperr.Invalid))
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field+": "+f.Message)
	}
	return out
}

func str(s string) *string { return &s }

var _ = Describe("Checker", func() {
	It("answers nil when every field is fine", func() {
		var c check.Checker
		c.Length("title", "  Summer  ", 1, 10)
		c.URL("link", "", false)
		c.Slug("slug", str("summer-promo-2"), 100)
		c.OneOf("mode", str("video"), []string{"video", "photo"})
		Expect(c.Err()).NotTo(HaveOccurred())
	})

	It("names every problem in one Invalid answer", func() {
		var c check.Checker
		c.Length("title", "   ", 1, 10)
		c.Length("excerpt", strings.Repeat("é", 11), 0, 10)
		c.URL("image_url", "ftp://example.com/a.png", true)
		c.URL("cover", "", true)
		c.Slug("slug", str("Summer--Promo"), 100)
		c.OneOf("direction", str("up"), []string{"ltr", "rtl"})
		c.Between("max", new(0), 1, 1000)
		err := c.Err()
		Expect(problems(err)).To(Equal([]string{
			"title: is required",
			"excerpt: must be at most 10 characters",
			"image_url: must be an http or https URL of at most 2000 characters",
			"cover: must be an http or https URL of at most 2000 characters",
			"slug: must be lower-case letters and digits joined by single hyphens or underscores, at most 100 characters",
			"direction: must be one of ltr, rtl",
			"max: must be between 1 and 1000",
		}))
		Expect(err.Error()).To(ContainSubstring("invalid fields"))
	})

	It("words a single problem in the error's message", func() {
		err := check.Invalid("ends_at", "must be after starts_at")
		Expect(problems(err)).To(Equal([]string{"ends_at: must be after starts_at"}))
		Expect(err.Error()).To(ContainSubstring(`Field "ends_at" must be after starts_at.`))
	})

	It("takes underscores in slugs and derives slugs from names", func() {
		var c check.Checker
		c.Slug("slug", str("summer_promo-2"), 100)
		Expect(c.Err()).To(Succeed())
		Expect(check.Slugify("  Été & Summer Promo 2! ", 100)).To(Equal("t-summer-promo-2"))
		Expect(check.Slugify("Wedding Invitations", 8)).To(Equal("wedding"))
		Expect(check.Slugify("***", 100)).To(BeEmpty())
	})

	It("bounds a slug by the given length", func() {
		var c check.Checker
		c.Slug("slug", str(strings.Repeat("a", 120)), 120)
		Expect(c.Err()).NotTo(HaveOccurred())
		c.Slug("slug", str(strings.Repeat("a", 121)), 120)
		Expect(problems(c.Err())).To(ConsistOf(ContainSubstring("at most 120 characters")))
	})

	It("words the problems for identity-svc: a code and a message about the whole input", func() {
		var c check.Checker
		Expect(c.Reject("validation_failed", "the tenant is invalid")).To(Succeed())
		c.AddIf(false, "slug", "must be lower-case")
		c.AddIf(true, "name", "is required and at most 200 characters")
		c.Add("kind", "must be Reseller or Enterprise")
		err := c.Reject("validation_failed", "the tenant is invalid")
		Expect(problems(err)).To(Equal([]string{"name: is required and at most 200 characters", "kind: must be Reseller or Enterprise"}))
		e, _ := apperr.As(err)
		Expect(e.Code).To(Equal("validation_failed"))
		Expect(e.Message).To(Equal("the tenant is invalid"))
	})

	It("words one problem with a code of its own", func() {
		err := check.Field("wrong_code", "The code is not correct.", "code", "is not correct")
		Expect(problems(err)).To(Equal([]string{"code: is not correct"}))
		e, _ := apperr.As(err)
		Expect(e.Code).To(Equal("wrong_code"))
		Expect(e.Message).To(Equal("The code is not correct."))
	})

	It("words the first problem as a sentence for agentteam-svc's plain-text answers", func() {
		var c check.Checker
		Expect(c.First()).To(Succeed())
		c.Text("title", str(strings.Repeat("x", 501)), check.TitleMax)
		c.Text("body", str("a\x00b"), check.TextMax)
		err := c.First()
		e, _ := apperr.As(err)
		Expect(e.Code).To(Equal("invalid"))
		Expect(e.Message).To(Equal("title must be at most 500 characters."))
		Expect(problems(err)).To(HaveLen(2))
	})

	It("refuses NUL bytes and invalid UTF-8 in text, and bounds lists and their items", func() {
		var c check.Checker
		c.Text("bad", str(string([]byte{0xff, 0xfe})), 10)
		c.Text("absent", nil, 0)
		c.List("tags", []string{"a", "b", "c"}, 2, 10)
		c.List("docs", []string{"fine", strings.Repeat("é", 6)}, 5, 5)
		Expect(problems(c.Err())).To(Equal([]string{
			"bad: must be valid UTF-8 text without NUL bytes",
			"tags: must have at most 2 items",
			"docs item: must be at most 5 characters",
		}))
		Expect(check.Blank(" \t\n")).To(BeTrue())
		Expect(check.Blank(" a ")).To(BeFalse())
	})
})
