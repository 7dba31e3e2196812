package apperr_test

import (
	"errors"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
)

var _ = Describe("application errors", func() {
	DescribeTable("map each kind to one HTTP status",
		func(kind apperr.Kind, status int) { Expect(kind.Status()).To(Equal(status)) },
		Entry("invalid", apperr.Invalid, http.StatusBadRequest),
		Entry("unauthenticated", apperr.Unauthenticated, http.StatusUnauthorized),
		Entry("forbidden", apperr.Forbidden, http.StatusForbidden),
		Entry("not found", apperr.NotFound, http.StatusNotFound),
		Entry("conflict", apperr.Conflict, http.StatusConflict),
		Entry("gone", apperr.Gone, http.StatusGone),
		Entry("too large", apperr.TooLarge, http.StatusRequestEntityTooLarge),
		Entry("unsupported", apperr.Unsupported, http.StatusUnsupportedMediaType),
		Entry("rate limited", apperr.RateLimited, http.StatusTooManyRequests),
		Entry("unavailable", apperr.Unavailable, http.StatusServiceUnavailable),
		Entry("internal", apperr.Internal, http.StatusInternalServerError),
		Entry("an unknown kind", apperr.Kind(99), http.StatusInternalServerError),
	)

	It("keep their kind through %w wrapping, so a 409 never turns into a 500", func() {
		err := fmt.Errorf("store: create user: %w", apperr.Conflictf("user %s already exists", "ada"))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Conflict))
		Expect(apperr.Is(err, apperr.Conflict)).To(BeTrue())
		e, ok := apperr.As(err)
		Expect(ok).To(BeTrue())
		Expect(e.Message).To(Equal("user ada already exists"))
		Expect(e.Code).To(Equal("conflict"))
	})

	It("keep the cause for errors.Is and logs but not in the client message", func() {
		cause := errors.New("dial tcp: connection refused")
		err := apperr.Wrap(cause, apperr.Unavailable, "db_down", "the database is unavailable")
		Expect(errors.Is(err, cause)).To(BeTrue())
		Expect(err.Message).NotTo(ContainSubstring("refused"))
		Expect(err.Error()).To(ContainSubstring("refused"))
	})

	It("treat plain errors and nil as internal or absent", func() {
		Expect(apperr.KindOf(errors.New("boom"))).To(Equal(apperr.Internal))
		Expect(apperr.Is(nil, apperr.Internal)).To(BeFalse())
	})

	It("carry field problems", func() {
		err := apperr.Invalidf("the %s is invalid", "tenant").WithFields(apperr.FieldError{Field: "slug", Message: "is required"})
		Expect(err.Fields).To(ConsistOf(apperr.FieldError{Field: "slug", Message: "is required"}))
		Expect(err.Kind).To(Equal(apperr.Invalid))
	})
})
