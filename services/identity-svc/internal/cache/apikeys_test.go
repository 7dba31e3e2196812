package cache_test

import (
	"context"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbox"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/apikey"
	"github.com/motionstudio/platform/services/identity-svc/internal/cache"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
)

// keyTTL is the cached keys' time to live in these specs: the bound within which another
// process reads a revocation when the revoked event does not reach it.
const keyTTL = 300 * time.Millisecond

// keyPair is an API-key store that writes and one that reads, and how long a write may take
// to be read.
type keyPair struct {
	writer, reader apikey.Store
	within         time.Duration
}

func apiKeys() apikey.Store { return store.NewAPIKeys(db, outbox.NewWriter(events.SourceIdentity)) }

func cachedKeys() *cache.Keys { return cache.NewKeys(apiKeys(), keyTTL, keyTTL, 100, time.Now) }

// The contract of apikey.Store's ByHash, run against the plain store and the cached one: a key
// read after it was created or revoked shows it (in another process, within the TTL).
var _ = DescribeTable("API keys read by hash after writes",
	func(setup func() keyPair) {
		ctx := context.Background()
		p := setup()
		tenantID, users := newAccount(1)
		now := time.Now().UTC()
		k := &apikey.Key{
			ID: uuid.NewString(), TenantID: tenantID, Name: "contract", Environment: "Live", Prefix: "msk_live_" + uuid.NewString()[:8],
			Last4: "abcd", Hash: uuid.NewString(), RateLimitRPM: 60, Active: true, CreatedBy: users[0], CreatedAt: now,
		}
		_, err := p.reader.ByHash(ctx, k.Hash)
		Expect(apperr.Is(err, apperr.NotFound)).To(BeTrue(), "an unknown hash")
		Expect(p.writer.Create(ctx, k)).To(Succeed())
		active := func() bool {
			got, err := p.reader.ByHash(ctx, k.Hash)
			if err != nil {
				return false
			}
			return got.Active
		}
		Eventually(active).WithTimeout(2*keyTTL).Should(BeTrue(), "the created key, once the unknown hash's short life passed")
		Expect(p.writer.Revoke(ctx, k, apikey.Revocation{By: users[0], At: now})).To(BeTrue())
		if p.within == 0 {
			Expect(active()).To(BeFalse())
			return
		}
		Eventually(active).WithTimeout(p.within).Should(BeFalse())
	},
	Entry("the plain store", func() keyPair {
		s := apiKeys()
		return keyPair{writer: s, reader: s}
	}),
	Entry("the cached store, by its own process", func() keyPair {
		s := cachedKeys()
		return keyPair{writer: s, reader: s}
	}),
	Entry("the cached store, across two processes without the revoked event", func() keyPair {
		return keyPair{writer: cachedKeys(), reader: cachedKeys(), within: 2 * keyTTL}
	}),
)

var _ = Describe("API keys kept in memory", func() {
	It("are answered from memory until another process's revocation is forgotten", func() {
		ctx := context.Background()
		tenantID, users := newAccount(1)
		k := &apikey.Key{
			ID: uuid.NewString(), TenantID: tenantID, Name: "kept", Environment: "Live", Prefix: "msk_live_" + uuid.NewString()[:8],
			Last4: "abcd", Hash: uuid.NewString(), RateLimitRPM: 60, Active: true, CreatedBy: users[0], CreatedAt: time.Now().UTC(),
		}
		Expect(apiKeys().Create(ctx, k)).To(Succeed())
		reader := cache.NewKeys(apiKeys(), time.Hour, time.Hour, 100, time.Now)
		got, err := reader.ByHash(ctx, k.Hash)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Active).To(BeTrue())
		Expect(apiKeys().Revoke(ctx, k, apikey.Revocation{By: users[0], At: time.Now()})).To(BeTrue())
		got, err = reader.ByHash(ctx, k.Hash)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Active).To(BeTrue(), "still the kept answer")
		reader.Forget(k.ID)
		got, err = reader.ByHash(ctx, k.Hash)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Active).To(BeFalse())
	})
})
