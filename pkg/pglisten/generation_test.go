package pglisten_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/pglisten"
)

var _ = Describe("a generation", func() {
	It("keeps a value only when read while live and with no change or reset since", func() {
		var g pglisten.Generation
		before := g.Ticket()
		Expect(before.Live()).To(BeFalse())
		g.SetLive(true)
		Expect(g.Keeps(before)).To(BeFalse(), "read before the listener listened")

		t := g.Ticket()
		Expect(t.Live()).To(BeTrue())
		Expect(g.Keeps(t)).To(BeTrue())
		g.Advance()
		Expect(g.Keeps(t)).To(BeFalse(), "a change arrived during the read")

		t = g.Ticket()
		g.SetLive(false)
		Expect(g.Keeps(t)).To(BeFalse(), "the listener lost its connection")
		Expect(g.Keeps(g.Ticket())).To(BeFalse(), "nothing is kept while not live")
		Expect(g.Live()).To(BeFalse())
	})
})
