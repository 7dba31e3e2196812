package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/email"
	"github.com/motionstudio/platform/services/identity-svc/internal/app"
)

// displayName is an address with a display name: mail.ParseAddress reads it, the email rule
// refuses it.
const displayName = "bob <bob@x.com>"

var _ = Describe("the one email rule at every entry point", func() {
	var c authClient
	BeforeEach(func() { c = newAuthClient() })

	emailRefused := func(status int, body map[string]any, field string) {
		GinkgoHelper()
		Expect(status).To(Equal(http.StatusBadRequest), "%v", body)
		Expect(body["errors"]).To(ContainElement(And(
			HaveKeyWithValue("field", field), HaveKeyWithValue("message", email.Message))), "%v", body)
	}

	It("refuses the display-name form on register, login and password reset with the same 400", func() {
		slug := authTenant()
		status, body := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": slug, "email": displayName, "password": authPassword})
		emailRefused(status, body, "email")
		status, body = c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": slug, "email": displayName, "password": authPassword})
		emailRefused(status, body, "email")
		status, body = c.do("POST", "/v1/auth/password/reset/request", "", map[string]any{"tenant_slug": slug, "email": displayName})
		emailRefused(status, body, "email")
	})

	It("refuses the display-name form as a tenant's contact email", func() {
		_, slug := newTenant("mail")
		platform := newMember(slug, "platform-admin")
		r := client.Do("POST", "/v1/tenants", platform.Token, map[string]any{"slug": uniqueSlug("mail"), "name": "Mail", "contact_email": displayName})
		var body map[string]any
		r.JSON(&body)
		emailRefused(r.Status, body, "contact_email")
	})

	It("refuses the display-name form in admin create-user and create-tenant", func() {
		ctx := context.Background()
		log := slog.New(slog.DiscardHandler)
		var sink strings.Builder
		slug := authTenant()
		err := app.Admin(ctx, cfg, log, []string{"create-user", "-tenant", slug, "-email", displayName, "-password", "long-enough"}, &sink)
		ae, ok := apperr.As(err)
		Expect(ok).To(BeTrue(), "%v", err)
		Expect(ae.Kind).To(Equal(apperr.Invalid))
		Expect(ae.Fields).To(ConsistOf(apperr.FieldError{Field: "email", Message: email.Message}))

		err = app.Admin(ctx, cfg, log, []string{"create-tenant", "-slug", uniqueSlug("mail"), "-name", "Mail", "-email", displayName}, &sink)
		ae, ok = apperr.As(err)
		Expect(ok).To(BeTrue(), "%v", err)
		Expect(ae.Fields).To(ContainElement(apperr.FieldError{Field: "contact_email", Message: email.Message}))
	})

	It("still logs in an account whose email was registered in mixed case", func() {
		slug := authTenant()
		status, body := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": slug, "email": "Mixed.Case@Example.test", "password": authPassword})
		Expect(status).To(Equal(http.StatusCreated), "%v", body)
		status, body = c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": slug, "email": " MIXED.case@example.TEST ", "password": authPassword})
		Expect(status).NotTo(Equal(http.StatusBadRequest), "%v", body)
		Expect(status).NotTo(Equal(http.StatusUnauthorized), "%v", body)
	})
})
