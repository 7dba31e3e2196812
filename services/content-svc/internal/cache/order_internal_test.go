package cache

import (
	"math/rand/v2"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// sameOrder expects o to hold want, place by place, with its blocks as its invariants say.
func sameOrder(o *order, want []int32) {
	GinkgoHelper()
	Expect(o.len()).To(Equal(len(want)))
	Expect(o.blocks).To(HaveLen(len(o.before)))
	held := 0
	for i, b := range o.blocks {
		Expect(b).NotTo(BeEmpty(), "block %d", i)
		Expect(len(b)).To(BeNumerically("<=", blockMax), "block %d", i)
		Expect(o.before[i]).To(Equal(held), "slots before block %d", i)
		held += len(b)
	}
	got := []int32{}
	for p, s := range o.from(0) {
		Expect(p).To(Equal(len(got)))
		got = append(got, s)
	}
	Expect(got).To(Equal(append([]int32{}, want...)))
	for _, p := range []int{0, len(want) / 3, len(want) - 1} {
		if p >= 0 && p < len(want) {
			Expect(o.at(p)).To(Equal(want[p]))
			Expect(o.window(p, 25)).To(Equal(want[p:min(len(want), p+25)]))
		}
	}
	Expect(o.window(len(want), 25)).To(BeEmpty())
}

var _ = Describe("an order in blocks", func() {
	It("holds, finds and pages its slots as one sorted array would, through inserts, removals, splits and emptied blocks", func() {
		r := rand.New(rand.NewPCG(20, 21)) // #nosec G404 -- test data
		// Slots are their own keys: the order is ascending, as search expects.
		var want []int32
		for s := range int32(3 * blockMax) {
			want = append(want, 2*s)
		}
		o := newOrder(slices.Clone(want))
		sameOrder(&o, want)
		next := int32(1)
		for i := range 20000 {
			if len(want) > 0 && (r.IntN(2) == 0 || len(want) > 5*blockMax) {
				p := r.IntN(len(want))
				// Mostly from the front, so that blocks empty and go.
				if i%3 == 0 {
					p = r.IntN(min(len(want), 10))
				}
				o.remove(p)
				want = slices.Delete(want, p, p+1)
			} else {
				s := next + 2*int32(r.IntN(4*blockMax)) // #nosec G115 -- small
				next += 2
				if slices.Contains(want, s) {
					continue
				}
				q := o.search(func(x int32) bool { return x > s })
				p, _ := slices.BinarySearch(want, s)
				Expect(q).To(Equal(p))
				o.insert(q, s)
				want = slices.Insert(want, p, s)
			}
			if i%500 == 0 {
				sameOrder(&o, want)
			}
		}
		sameOrder(&o, want)
		for len(want) > 0 {
			o.remove(0)
			want = want[1:]
		}
		sameOrder(&o, want)
		Expect(o.search(func(int32) bool { return true })).To(Equal(0))
		o.insert(0, 7)
		sameOrder(&o, []int32{7})
	})
})
