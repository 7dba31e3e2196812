package paging_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/paging"
)

var _ = Describe("a page request", func() {
	ptr := func(n int) *int { return &n }

	It("defaults to the first page of 20", func() {
		p, err := paging.New(nil, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(p).To(Equal(paging.Page{Number: 1, Size: 20}))
		Expect(paging.Ints(0, 0)).To(Equal(p))
	})

	It("offsets and describes a middle page", func() {
		p, err := paging.New(ptr(3), ptr(10))
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Offset()).To(Equal(20))
		Expect(p.Meta(31)).To(Equal(paging.Meta{Page: 3, PageSize: 10, Total: 31, HasMore: true}))
		Expect(p.Meta(30).HasMore).To(BeFalse())
	})

	It("names every field that is out of range", func() {
		_, err := paging.New(ptr(0), ptr(101))
		e, ok := apperr.As(err)
		Expect(ok).To(BeTrue())
		Expect(e.Kind).To(Equal(apperr.Invalid))
		Expect(e.Fields).To(ConsistOf(
			apperr.FieldError{Field: "page", Message: "must be between 1 and 100000"},
			apperr.FieldError{Field: "page_size", Message: "must be between 1 and 100"},
		))
		_, err = paging.Ints(paging.MaxNumber+1, -1)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
	})
})
