package catalog_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// missing is what kept answers for a key the cache does not hold.
const missing = -1

func kept(c *catalog.CountCache, key string) int {
	if n, ok := c.Get(key); ok {
		return n
	}
	return missing
}

var _ = Describe("the catalog count cache", func() {
	var (
		now   time.Time
		clock = func() time.Time { return now }
	)

	BeforeEach(func() { now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) })

	It("answers a kept total until the TTL has passed", func() {
		c := catalog.NewCountCache(10*time.Second, 8, clock)
		c.Put("video", c.Generation(), 42)
		now = now.Add(9 * time.Second)
		Expect(kept(c, "video")).To(Equal(42))
		now = now.Add(time.Second)
		Expect(kept(c, "video")).To(Equal(missing))
	})

	It("keeps totals apart per key", func() {
		c := catalog.NewCountCache(time.Minute, 8, clock)
		c.Put("video", c.Generation(), 1)
		c.Put("slideshow", c.Generation(), 2)
		Expect(kept(c, "video")).To(Equal(1))
		Expect(kept(c, "slideshow")).To(Equal(2))
		Expect(kept(c, "mockup")).To(Equal(missing))
	})

	It("drops every total when a write bumps the generation", func() {
		c := catalog.NewCountCache(time.Minute, 8, clock)
		c.Put("video", c.Generation(), 42)
		c.Invalidate()
		Expect(kept(c, "video")).To(Equal(missing))
	})

	It("refuses a total counted before a write that finished while counting", func() {
		c := catalog.NewCountCache(time.Minute, 8, clock)
		gen := c.Generation()
		c.Invalidate()
		c.Put("video", gen, 42)
		Expect(kept(c, "video")).To(Equal(missing))
		c.Put("video", c.Generation(), 43)
		Expect(kept(c, "video")).To(Equal(43))
	})

	It("keeps at most its size, making room by dropping the oldest total", func() {
		c := catalog.NewCountCache(time.Minute, 3, clock)
		for i := range 3 {
			c.Put(fmt.Sprint("k", i), c.Generation(), i)
			now = now.Add(time.Second)
		}
		c.Put("k0", c.Generation(), 10)
		c.Put("k3", c.Generation(), 3)
		Expect(kept(c, "k1")).To(Equal(missing), "k1 was the oldest")
		Expect(kept(c, "k0")).To(Equal(10))
		Expect(kept(c, "k2")).To(Equal(2))
		Expect(kept(c, "k3")).To(Equal(3))
	})

	It("drops expired totals first when full", func() {
		c := catalog.NewCountCache(10*time.Second, 2, clock)
		c.Put("old", c.Generation(), 1)
		now = now.Add(5 * time.Second)
		c.Put("mid", c.Generation(), 2)
		now = now.Add(6 * time.Second)
		c.Put("new", c.Generation(), 3)
		Expect(kept(c, "mid")).To(Equal(2))
		Expect(kept(c, "new")).To(Equal(3))
	})

	It("keeps nothing when its TTL is zero", func() {
		c := catalog.NewCountCache(0, 8, clock)
		c.Put("video", c.Generation(), 42)
		Expect(kept(c, "video")).To(Equal(missing))
	})
})
