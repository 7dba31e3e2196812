package app_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/identity-svc/internal/app"
)

var _ = Describe("an operator's plans, gifts and quests", func() {
	var (
		slug string
		me   member
	)

	BeforeEach(func() {
		_, slug = newTenant("offers")
		me = newMember(slug, "")
	})

	listed := func(path, field string) []any {
		GinkgoHelper()
		r := client.Do("GET", path, me.Token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var page struct{ Data []map[string]any }
		r.JSON(&page)
		out := []any{}
		for _, item := range page.Data {
			out = append(out, item[field])
		}
		return out
	}
	refused := func(args ...string) error {
		GinkgoHelper()
		err := app.Admin(context.Background(), cfg, slog.New(slog.DiscardHandler), args, &bytes.Buffer{})
		Expect(err).To(HaveOccurred())
		return err
	}

	It("creates a plan users can see and buy, and retires it", func() {
		admin("plan", "create", "-tenant", slug, "-code", "pro", "-name", "Pro", "-price-minor", "1500", "-currency", "EUR", "-seconds", "3600")
		Expect(listed("/v1/plans", "code")).To(ConsistOf("pro"))

		err := refused("plan", "create", "-tenant", slug, "-code", "pro", "-name", "Again", "-price-minor", "1", "-currency", "EUR")
		Expect(apperr.KindOf(err)).To(Equal(apperr.Conflict))
		err = refused("plan", "create", "-tenant", slug, "-code", "Bad Code", "-name", "X", "-currency", "euro")
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		Expect(err.(*apperr.Error).Fields).To(ContainElements(
			HaveField("Field", "code"), HaveField("Field", "currency"), HaveField("Field", "price_minor")))

		admin("plan", "retire", "-tenant", slug, "-code", "pro")
		Expect(listed("/v1/plans", "code")).To(BeEmpty())
		Expect(apperr.KindOf(refused("plan", "retire", "-tenant", slug, "-code", "pro"))).To(Equal(apperr.NotFound))
	})

	It("creates quests with a balance or a gift prize, retires them, and retires a gift no active quest awards", func() {
		cash := admin("quest", "create", "-tenant", slug, "-title", "Say hello", "-trigger", "user.registered", "-prize-amount", "500")
		gift := admin("gift", "create", "-tenant", slug, "-name", "Extra renders", "-prize-type", "DailyRenders", "-value", "3", "-valid-for", "720h")
		prized := admin("quest", "create", "-tenant", slug, "-title", "Buy a plan", "-type", "Milestone", "-trigger", "plan.activated", "-gift", gift["id"].(string))
		Expect(listed("/v1/quests", "title")).To(ConsistOf("Say hello", "Buy a plan"))

		err := refused("quest", "create", "-tenant", slug, "-title", "Odd", "-trigger", "user.banned", "-prize-amount", "1")
		Expect(err.(*apperr.Error).Fields).To(ContainElement(HaveField("Field", "trigger")))
		Expect(apperr.KindOf(refused("gift", "retire", "-tenant", slug, "-id", gift["id"].(string)))).To(Equal(apperr.Conflict))

		admin("quest", "retire", "-tenant", slug, "-id", prized["id"].(string))
		admin("gift", "retire", "-tenant", slug, "-id", gift["id"].(string))
		Expect(listed("/v1/quests", "title")).To(ConsistOf("Say hello"))
		err = refused("quest", "create", "-tenant", slug, "-title", "Again", "-trigger", "plan.activated", "-gift", gift["id"].(string))
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound), "a retired gift is awarded by no new quest")

		admin("quest", "retire", "-tenant", slug, "-id", cash["id"].(string))
		Expect(listed("/v1/quests", "title")).To(BeEmpty())
	})

	It("acts on the named tenant only", func() {
		_, other := newTenant("offersother")
		admin("plan", "create", "-tenant", other, "-code", "elsewhere", "-name", "Elsewhere", "-price-minor", "0", "-currency", "EUR")
		Expect(listed("/v1/plans", "code")).To(BeEmpty())
		Expect(apperr.KindOf(refused("plan", "retire", "-tenant", slug, "-code", "elsewhere"))).To(Equal(apperr.NotFound))
		Expect(apperr.KindOf(refused("plan", "create", "-tenant", "no-such-tenant", "-code", "x", "-name", "X", "-price-minor", "0", "-currency", "EUR"))).
			To(Equal(apperr.NotFound))
	})
})
