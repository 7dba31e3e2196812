package bounded_test

import (
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/bounded"
)

// kept answers the value m keeps for k, failing the spec when there is none.
func kept[K comparable, V any](m *bounded.Map[K, V], k K) V {
	GinkgoHelper()
	v, ok := m.Get(k)
	Expect(ok).To(BeTrue(), "kept")
	return v
}

var _ = Describe("a bounded map", func() {
	It("answers what it keeps and evicts the least recently used beyond its bound", func() {
		m := bounded.New(bounded.Options[string, int]{Max: 2})
		m.Put("a", 1)
		m.Put("b", 2)
		_, _ = m.Get("a")
		m.Put("c", 3)
		Expect(m.Len()).To(Equal(2))
		_, ok := m.Get("b")
		Expect(ok).To(BeFalse(), "b was the least recently used")
		Expect(kept(m, "a")).To(Equal(1))
		Expect(kept(m, "c")).To(Equal(3))
		m.Put("c", 4)
		Expect(kept(m, "c")).To(Equal(4), "a new value replaces the old one")
		Expect(m.Len()).To(Equal(2))
	})

	It("bounds the sum of the entries' sizes and refuses an entry larger than the bound", func() {
		m := bounded.New(bounded.Options[string, []byte]{Max: 10, Size: func(_ string, b []byte) int { return len(b) }})
		m.Put("a", make([]byte, 4))
		m.Put("b", make([]byte, 4))
		m.Put("c", make([]byte, 4))
		_, ok := m.Get("a")
		Expect(ok).To(BeFalse(), "a made room for c")
		Expect(m.Len()).To(Equal(2))
		Expect(m.Keep(m.Ticket(), "d", make([]byte, 11))).To(BeFalse())
		_, ok = m.Get("d")
		Expect(ok).To(BeFalse())
	})

	It("keeps nothing when its bound is not positive", func() {
		m := bounded.New(bounded.Options[string, int]{})
		m.Put("a", 1)
		Expect(m.Len()).To(BeZero())
	})

	It("answers an entry only until its time to live passes", func() {
		now := time.Unix(1000, 0)
		m := bounded.New(bounded.Options[string, int]{Max: 10, TTL: time.Minute, Now: func() time.Time { return now }})
		m.Put("a", 1)
		m.KeepFor(m.Ticket(), "b", 2, 10*time.Second)
		now = now.Add(10 * time.Second)
		_, ok := m.Get("b")
		Expect(ok).To(BeFalse(), "b had its own, shorter life")
		Expect(kept(m, "a")).To(Equal(1))
		now = now.Add(50 * time.Second)
		_, ok = m.Get("a")
		Expect(ok).To(BeFalse())
		Expect(m.Len()).To(BeZero(), "an expired entry read is dropped")
	})

	It("does not keep a value read while a change or a reset arrived", func() {
		m := bounded.New(bounded.Options[string, int]{Max: 10, Listened: true})
		before := m.Ticket()
		Expect(m.Keep(before, "a", 1)).To(BeFalse(), "nothing is kept before the listener listens")
		m.SetLive(true)
		Expect(m.Live()).To(BeTrue())
		Expect(m.Keep(before, "a", 1)).To(BeFalse(), "read before the listener listened")

		for name, change := range map[string]func(){
			"Delete":     func() { m.Delete("other") },
			"DeleteFunc": func() { m.DeleteFunc(func(string, int) bool { return false }) },
			"Clear":      m.Clear,
		} {
			t := m.Ticket()
			change()
			Expect(m.Keep(t, "a", 1)).To(BeFalse(), name+" arrived during the read")
		}
		Expect(m.Keep(m.Ticket(), "a", 1)).To(BeTrue())

		t := m.Ticket()
		m.SetLive(false)
		Expect(m.Len()).To(BeZero(), "losing the listener drops everything")
		Expect(m.Keep(t, "a", 1)).To(BeFalse(), "the listener lost its connection")
		Expect(m.Keep(m.Ticket(), "a", 1)).To(BeFalse(), "nothing is kept while not live")
	})

	It("drops what DeleteFunc selects and keeps the rest", func() {
		m := bounded.New(bounded.Options[int, int]{Max: 100})
		for i := range 10 {
			m.Put(i, i%2)
		}
		m.DeleteFunc(func(_ int, v int) bool { return v == 1 })
		Expect(m.Len()).To(Equal(5))
		Expect(kept(m, 4)).To(Equal(0))
		m.Delete(4)
		_, ok := m.Get(4)
		Expect(ok).To(BeFalse())
	})

	It("stays within its bound under concurrent use", func() {
		m := bounded.New(bounded.Options[string, int]{Max: 50})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 1000 {
					k := fmt.Sprint(g, i%80)
					if _, ok := m.Get(k); !ok {
						m.Keep(m.Ticket(), k, i)
					}
					if i%97 == 0 {
						m.Delete(k)
					}
				}
			})
		}
		wg.Wait()
		Expect(m.Len()).To(BeNumerically("<=", 50))
	})
})
