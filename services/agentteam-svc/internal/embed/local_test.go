package embed_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
)

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

var _ = Describe("the built-in local embedder", func() {
	local := embed.NewLocal()

	It("answers one unit vector of 384 dimensions per text, in order", func(ctx SpecContext) {
		vecs, err := local.Embed(ctx, []string{"ship the release notes", "fix the login bug"})
		Expect(err).NotTo(HaveOccurred())
		Expect(vecs).To(HaveLen(2))
		for _, v := range vecs {
			Expect(v).To(HaveLen(embed.Dimensions))
			Expect(norm(v)).To(BeNumerically("~", 1, 1e-5))
		}
		Expect(vecs[0]).To(Equal(local.Vector("ship the release notes")))
	})

	It("is deterministic and ignores case and punctuation", func() {
		Expect(local.Vector("Deploy the API!")).To(Equal(local.Vector("deploy the api")))
	})

	It("places related texts closer than unrelated ones", func() {
		q := local.Vector("database migration failed")
		related := local.Vector("the database migrations fail on startup")
		unrelated := local.Vector("choose a warmer colour palette for the landing page")
		Expect(embed.Dot(q, related)).To(BeNumerically(">", embed.Dot(q, unrelated)))
		Expect(embed.Dot(q, q)).To(BeNumerically("~", 1, 1e-5))
	})

	It("answers a zero vector for a text without words", func() {
		Expect(norm(local.Vector(" ?! "))).To(BeZero())
	})

	It("names itself so its vectors are never mixed with another embedder's", func() {
		Expect(local.ID()).To(Equal(embed.LocalID))
	})
})
