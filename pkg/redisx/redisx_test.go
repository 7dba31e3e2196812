package redisx_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("connecting", func() {
	It("connects to a reachable Redis", func(ctx SpecContext) {
		c, err := redisx.Connect(ctx, redisx.Config{URL: testkit.Env("REDIS_URL", "redis://127.0.0.1:6379/0")})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		Expect(redisx.Ping(ctx, c)).To(Succeed())
	})

	It("fails when nothing answers", func(ctx SpecContext) {
		_, err := redisx.Connect(ctx, redisx.Config{URL: "redis://127.0.0.1:1/0"})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
	})

	It("rejects a malformed URL", func(ctx SpecContext) {
		_, err := redisx.Connect(ctx, redisx.Config{URL: "http://127.0.0.1:6379"})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
	})
})
