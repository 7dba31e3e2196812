package password_test

import (
	"runtime"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/identity-svc/internal/password"
)

var _ = Describe("password hashing under load", func() {
	// Slow parameters, so that the first hashes are still running when the rest arrive.
	params := password.Params{MemoryKiB: 16 * 1024, Iterations: 6, Parallelism: 1, SaltLen: 16, KeyLen: 32}

	It("verifies what it hashed", func() {
		h := password.NewHasher(params)
		stored, err := h.Hash("correct horse battery staple")
		Expect(err).NotTo(HaveOccurred())
		match, rehash, err := h.Verify("correct horse battery staple", stored)
		Expect(err).NotTo(HaveOccurred())
		Expect(match).To(BeTrue())
		Expect(rehash).To(BeFalse())
	})

	It("refuses hashes beyond the cores and their queue with Unavailable and Retry-After, and serves the rest", func() {
		h := password.NewHasher(params)
		stored, err := h.Hash("correct horse battery staple")
		Expect(err).NotTo(HaveOccurred())
		admitted := runtime.GOMAXPROCS(0) * (1 + password.QueuePerCore)
		callers := 5 * admitted
		var (
			wg             sync.WaitGroup
			mu             sync.Mutex
			served, busy   int
			retryAfterSeen bool
		)
		start := make(chan struct{})
		for range callers {
			wg.Go(func() {
				defer GinkgoRecover()
				<-start
				match, _, err := h.Verify("correct horse battery staple", stored)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					Expect(match).To(BeTrue())
					served++
					return
				}
				Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
				e, _ := apperr.As(err)
				retryAfterSeen = e.RetryAfter > 0
				busy++
			})
		}
		close(start)
		wg.Wait()
		Expect(served + busy).To(Equal(callers))
		Expect(served).To(BeNumerically(">=", admitted), "every admitted hash is served")
		Expect(busy).To(BeNumerically(">", 0), "the excess is refused instead of queueing")
		Expect(retryAfterSeen).To(BeTrue())

		match, _, err := h.Verify("correct horse battery staple", stored)
		Expect(err).NotTo(HaveOccurred(), "the hasher takes work again once the load is gone")
		Expect(match).To(BeTrue())
	})

	It("says it is busy, without hashing, exactly while a hash would be refused", func() {
		h := password.NewHasher(params)
		stored, err := h.Hash("correct horse battery staple")
		Expect(err).NotTo(HaveOccurred())
		Expect(h.Ready()).To(Succeed())
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) * (1 + password.QueuePerCore) {
			wg.Go(func() {
				defer GinkgoRecover()
				_, _, err := h.Verify("correct horse battery staple", stored)
				Expect(err).NotTo(HaveOccurred())
			})
		}
		Eventually(func() apperr.Kind { return apperr.KindOf(h.Ready()) }).Should(Equal(apperr.Unavailable))
		e, _ := apperr.As(h.Ready())
		if e != nil {
			Expect(e.RetryAfter).To(Equal(password.RetryAfter))
		}
		wg.Wait()
		Expect(h.Ready()).To(Succeed(), "ready again once the queue drains")
	})
})
