package memory_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
)

var _ = Describe("the edit distance of a correction", func() {
	DescribeTable("counts insertions, deletions and substitutions of characters",
		func(a, b string, want int) {
			Expect(memory.EditDistance(a, b)).To(Equal(want))
			Expect(memory.EditDistance(b, a)).To(Equal(want))
		},
		Entry("equal texts", "same", "same", 0),
		Entry("from nothing", "", "abc", 3),
		Entry("kitten to sitting", "kitten", "sitting", 3),
		Entry("runes, not bytes", "café", "cafe", 1),
		Entry("a local edit of a long text", strings.Repeat("a", 5000)+"x"+strings.Repeat("b", 5000), strings.Repeat("a", 5000)+"yz"+strings.Repeat("b", 5000), 2),
		Entry("flaw to lawn", "flaw", "lawn", 2),
	)

	It("answers an upper bound instead of spending seconds on huge rewrites", func() {
		a, b := strings.Repeat("ab", 5000), strings.Repeat("cd", 5001)
		Expect(memory.EditDistance(a, b)).To(Equal(10002))
	})
})
